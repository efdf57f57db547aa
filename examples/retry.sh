rates="$(spool activity run fetch-rates --requires shell \
  --attempts 5 --backoff 2s --retry-on-exit 75 \
  -- sh -c 'curl -fsS https://api.example.com/rates || exit 75')"
spool step store -- echo "stored $rates"
