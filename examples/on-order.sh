# Handle each event once: the work runs once per order, even if the same order arrives twice.
order="$(python3 -c 'import json, os; print(json.load(open(os.environ["SPOOL_INPUT_FILE"]))["payload"]["order"])')"

rc=0
spool state add "order-$order" --entity orders || rc=$?
case $rc in
  0) ;;
  3) echo "order $order already handled"; exit 0 ;;
  *) exit 1 ;;   # couldn't reach the server: fail, don't skip
esac

spool step charge -- sh -c 'echo "charged order $1, key $SPOOL_IDEMPOTENCY_KEY"' _ "$order"
spool step ship -- echo "shipped order $order"
