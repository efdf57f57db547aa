# A lock per customer: one run at a time works on a given customer; the work outside the lock
# does not wait.
customer=acme
spool step fetch -- echo "fetched for $customer"
spool lock "customer-$customer" -- sh -c 'echo "start $(date +%T)"; sleep 3; echo "end $(date +%T)"'
