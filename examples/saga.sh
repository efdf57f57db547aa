booked=()   # booking ids, in the order they were made

rollback() {
  for (( i=${#booked[@]}-1; i>=0; i-- )); do
    spool step cancel --label "${booked[i]}" -- echo "cancelled ${booked[i]}"
  done
  exit 1
}

flight="$(spool step book-flight -- echo FL-881)" || rollback
booked+=("$flight")

hotel="$(spool step book-hotel -- echo HT-2207)" || rollback
booked+=("$hotel")

car="$(spool step book-car -- sh -c 'echo "no cars left" >&2; exit 1')" || rollback
booked+=("$car")

spool step confirm -- echo "booked $flight, $hotel and $car"
