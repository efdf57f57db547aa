# Debounce a burst of events: each event draws a ticket and sleeps; only the run holding the
# highest ticket when it wakes does the work.
customer="$(python3 -c 'import json, os; print(json.load(open(os.environ["SPOOL_INPUT_FILE"]))["payload"]["customer"])')"

# incr is recorded, so this run keeps its ticket across the sleep.
mine="$(spool state incr "ticket:$customer" --entity reindex --op ticket)"

spool sleep 5s   # the quiet window

# A live read: it sees tickets drawn by later arrivals.
if [ "$mine" = "$(spool state get "ticket:$customer" --entity reindex)" ]; then
  spool step reindex -- echo "reindexing $customer (ticket $mine)"
else
  echo "ticket $mine superseded"
fi
