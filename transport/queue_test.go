package transport

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestFlightQueuePopsByTimeThenScheduleOrder(t *testing.T) {
	var q flightQueue
	rng := rand.New(rand.NewPCG(1, 2))
	const count = 5000
	for i := range count {
		// Few distinct times, so most entries tie and the sequence decides.
		q.push(time.Duration(rng.IntN(20)), []byte{byte(i), byte(i >> 8)})
	}
	require.Equal(t, count, q.len())
	require.False(t, q.due(-1))
	prevAt, prevIndex := time.Duration(-1), -1
	for q.len() > 0 {
		require.True(t, q.due(19))
		e := q.pop()
		index := int(e.data[0]) | int(e.data[1])<<8
		if e.at == prevAt {
			require.Greater(t, index, prevIndex, "ties come out in schedule order")
		} else {
			require.Greater(t, e.at, prevAt)
		}
		prevAt, prevIndex = e.at, index
	}
	require.False(t, q.due(19), "empty queue has nothing due")
}

func TestFlightQueueReleasesPoppedBuffers(t *testing.T) {
	var q flightQueue
	q.push(1, []byte{1})
	q.push(2, []byte{2})
	q.pop()
	q.pop()
	require.Nil(t, q.items[:2][0].data, "spare capacity must not keep buffers reachable")
	require.Nil(t, q.items[:2][1].data)
}
