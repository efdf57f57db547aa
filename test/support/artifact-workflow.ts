/**
 * The acceptance workflow (docs/artifacts.md): a bash script builds a 50 MiB file, puts it,
 * sleeps (so a new pass gets it), gets it back and checks its sha256. On the second pass the file
 * it put holds other bytes: a replayed put must upload nothing, so the get still gives the first
 * pass's bytes.
 */
export const ARTIFACT_MIB = 50;

export const ARTIFACT_WORKFLOW = `set -euo pipefail
if [ "$SPOOL_PASS" = 1 ]; then
  head -c ${ARTIFACT_MIB * 1024 * 1024} /dev/urandom > build.bin
else
  head -c 1000 /dev/zero > build.bin
fi
want=$(spool step sha -- sh -c "sha256sum build.bin | cut -d' ' -f1")
spool artifact put build.bin build.bin
spool sleep 1s
rm -f build.bin got.bin
spool artifact get build.bin got.bin
got=$(sha256sum got.bin | cut -d' ' -f1)
spool artifact list
if [ "$got" = "$want" ]; then echo "sha256 matches on pass $SPOOL_PASS: $got"; else echo "sha256 differs: got $got, want $want"; exit 1; fi
`;
