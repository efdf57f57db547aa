# A deadline that an event can cut short: a trial that ends in 14 days unless the customer upgrades
# first. TRIAL_LENGTH shortens it (the seed: "To try it, change 14d to 30s").
customer="$(python3 -c 'import json, os; print(json.load(open(os.environ["SPOOL_INPUT_FILE"]))["payload"]["customer"])')"
spool step welcome -- echo "trial started for $customer"

if spool wait event plan.upgraded --timeout "${TRIAL_LENGTH:-14d}" > /dev/null; then
  spool step thank -- echo "$customer upgraded"
else
  spool step downgrade -- echo "trial over for $customer"
fi
