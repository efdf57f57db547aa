# Poll an outside system on a schedule, continuing from where the last check stopped.
since="$(spool state get cursor --entity tickets)"

# Stands in for "GET /tickets?since=$since"; prints the new cursor.
latest="$(spool step fetch -- sh -c 'echo $(( ${1:-0} + 10 ))' _ "$since")"

spool step process -- echo "processed tickets ${since:-0}..$latest"
spool state set cursor "$latest" --entity tickets
