#!/bin/sh
# Runs TestRealSidecar (systems/agones) against the real Agones sidecar in
# local mode: builds sdk-server from an Agones source tree if the binary is
# missing, starts it with testdata/gameserver.yaml on loopback, runs the
# test, stops it and counts the sidecar's log lines per message. CI never
# runs this: it needs the Agones source and a 140 s build.
#
#   AGONES_SRC  an Agones source tree (git clone
#               https://github.com/googleforgames/agones); /tmp/agones-src
#   SDK_SERVER  the binary, built there if missing; /tmp/sdk-server
#   HTTP_PORT, GRPC_PORT  the sidecar's ports; 19358, 19357
set -eu

AGONES_SRC=${AGONES_SRC:-/tmp/agones-src}
SDK_SERVER=${SDK_SERVER:-/tmp/sdk-server}
HTTP_PORT=${HTTP_PORT:-19358}
GRPC_PORT=${GRPC_PORT:-19357}
here=$(cd "$(dirname "$0")" && pwd)

if [ ! -x "$SDK_SERVER" ]; then
	if [ ! -d "$AGONES_SRC/cmd/sdk-server" ]; then
		echo "no $SDK_SERVER and no Agones source in $AGONES_SRC: git clone https://github.com/googleforgames/agones there, or set AGONES_SRC" >&2
		exit 2
	fi
	echo "building $SDK_SERVER from $AGONES_SRC (about 140 s)"
	(cd "$AGONES_SRC" && GOFLAGS=-mod=vendor nice -n 10 go build -o "$SDK_SERVER" ./cmd/sdk-server)
fi
if [ -d "$AGONES_SRC/.git" ]; then
	echo "Agones commit: $(git -C "$AGONES_SRC" rev-parse HEAD)"
else
	echo "Agones source $AGONES_SRC is not a git checkout: note its commit yourself"
fi

log=$(mktemp)
"$SDK_SERVER" --local --address 127.0.0.1 --http-port "$HTTP_PORT" --grpc-port "$GRPC_PORT" \
	-f "$here/gameserver.yaml" >"$log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -f "$log"' EXIT
# The SDK retries for 30 s while the sidecar is not listening; a sidecar
# that exits at once (a port taken) is reported here instead.
sleep 1
if ! kill -0 "$pid" 2>/dev/null; then
	echo "the sidecar exited:" >&2
	cat "$log" >&2
	exit 1
fi

status=0
(cd "$here/.." && GHOSTWIRE_AGONES_SIDECAR="http://127.0.0.1:$HTTP_PORT" go test -count=1 -v -run '^TestRealSidecar$' .) || status=$?

echo "sidecar: $(grep -o '"version":"[^"]*"' "$log" | head -n 1); $(go version)"
echo "sidecar log, lines per message:"
sed -n 's/.*"message":"\([^"]*\)".*/\1/p; s/.*"msg":"\([^"]*\)".*/\1/p' "$log" | sort | uniq -c | sort -rn
exit "$status"
