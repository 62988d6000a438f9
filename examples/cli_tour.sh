#!/usr/bin/env bash
# The fairstream CLI end to end: a reference server that batches as the seed's did, a probe,
# a load test sent all at once and through the dispatcher, the two compared, the traces
# analysed, and a what-if replay. Runs as it is: bash examples/cli_tour.sh
set -euo pipefail
out=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; rm -rf "$out"' EXIT

# --8<-- [start:serve]
# static batches of 4, finished streams held until their batch ends; 4x faster than real time
fairstream serve --mode static --batch-size 4 --release batch_end --time-scale 0.25 \
  --port 0 > "$out/server.log" &
# --8<-- [end:serve]
server=$!
until grep -q '^listening on ' "$out/server.log"; do sleep 0.1; done
URL=$(sed -n 's/^listening on //p' "$out/server.log")

# --8<-- [start:probe]
fairstream probe --base-url "$URL" --model fairstream-ref             # a verdict in ~20 requests
fairstream probe --base-url "$URL" --model fairstream-ref --json      # the same, as JSON
# --8<-- [end:probe]

# --8<-- [start:bench]
# 16 requests at once (half 8, half 64 tokens), then the same through the dispatcher
fairstream bench --base-url "$URL" --model fairstream-ref --requests 16 --concurrency 16 \
  --output-tokens mix:8,64 --out "$out/naive"
fairstream bench --base-url "$URL" --model fairstream-ref --requests 16 --concurrency 16 \
  --output-tokens mix:8,64 --policy auto --out "$out/auto"
fairstream bench --compare "$out/naive/results.json" "$out/auto/results.json"
# --8<-- [end:bench]

# --8<-- [start:analyze]
fairstream analyze "$out/naive/traces.jsonl" --timeline   # how the server batched that run
# --8<-- [end:analyze]

# --8<-- [start:replay]
# what would auto have saved on that traffic? exit 3: it refuses rather than guess
fairstream replay "$out/naive/traces.jsonl" --policy auto || [ $? -eq 3 ]
# --8<-- [end:replay]
