regions="eu-north us-east ap-south"

# Submit every item before waiting on any, so they run side by side.
for region in $regions; do
  spool activity submit "probe-$region" --requires shell --attempts 3 --backoff 5s \
    -- sh -c 'echo "$1: $((RANDOM % 50 + 10))ms"' _ "$region"
done

for region in $regions; do
  spool activity wait "probe-$region"
done
