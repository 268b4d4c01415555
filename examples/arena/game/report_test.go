package game

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestTickTimeIsTheMeanAndThe99thPercentile(t *testing.T) {
	assert.Nil(t, tickTime(nil))
	var ts []time.Duration
	for i := 100; i >= 1; i-- {
		ts = append(ts, time.Duration(i)*time.Microsecond)
	}
	assert.Equal(t, &TickTime{Mean: 50.5, P99: 99}, tickTime(ts))
	assert.Equal(t, &TickTime{Mean: 7, P99: 7}, tickTime([]time.Duration{7 * time.Microsecond}))
}
