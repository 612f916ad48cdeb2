#!/usr/bin/env bash
# screenshots.sh: take a screenshot of each page of the queue dashboard
# (examples/dashboard, on the embedded miniredis or REDIS_URL) in headless
# Chromium, into the directory given as argument (default
# /tmp/ria-screenshots). Installs Debian's chromium when it is missing
# (as root, with apt-get).
set -euo pipefail

out=${1:-/tmp/ria-screenshots}
port=${PORT:-18473}
cd "$(dirname "$0")/.."

browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "installing chromium (apt-get)"
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
		browser=$(command -v chromium)
	else
		echo "chromium is missing: run 'sudo apt-get install chromium'" >&2
		exit 1
	fi
fi

mkdir -p "$out"
go build -o "$out/.dashboard" ./examples/dashboard
"$out/.dashboard" -serve -addr "127.0.0.1:$port" -for 300s >"$out/.dashboard.log" 2>&1 &
pid=$!
profile=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -rf "$profile" "$out/.dashboard"' EXIT

base="http://127.0.0.1:$port/queues"
for _ in $(seq 100); do
	curl -fsS -o /dev/null "$base/" 2>/dev/null && break
	kill -0 $pid 2>/dev/null || { cat "$out/.dashboard.log" >&2; exit 1; }
	sleep 0.1
done
curl -fsS -o /dev/null "$base/" || { echo "the dashboard did not come up" >&2; cat "$out/.dashboard.log" >&2; exit 1; }

shot() { # name path
	"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
		--user-data-dir="$profile" --window-size=1280,900 \
		--screenshot="$out/$1.png" "$base/$2" >/dev/null 2>&1
	test -s "$out/$1.png" || { echo "no screenshot of $2" >&2; exit 1; }
	echo "$out/$1.png  <- $base/$2"
}
shot overview ""
shot ready 'ready?queue=email'
shot ready-page2 'ready?queue=email&page=2'
shot delayed delayed
shot running running
shot dead dead
shot task-retrying 'task?id=charge-A-17'
shot task-dead 'task?id=charge-C-99'
shot paused-queue 'ready?queue=reports'
