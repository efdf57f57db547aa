import { SLOW_STEP_SECONDS, isSlowStep, type Op, type Workflow } from './generate.js';

/** Bytes over SPOOL_MAX_ARTIFACT_BYTES (which the runner sets to ARTIFACT_LIMIT_BYTES). */
export const ARTIFACT_LIMIT_BYTES = 400 * 1024;
const OVER_LIMIT = 500 * 1024;
/**
 * How long a wait the harness answers may wait: it answers within seconds (a restart included), so
 * a timeout means a delivery was lost, and shows as exit 124 rather than a run that never ends.
 */
export const ANSWER_WITHIN = '45s';

/**
 * A step body: counts its execution (outside the engine, in $VERIFY_COUNT), prints the op's bytes
 * from $VERIFY_DATA, then a nonce, so a body that ran again after its result was recorded is seen.
 */
const body = (id: string, exit = 0, slow = false): string =>
  `sh -c 'echo "${id} $$" >> "$VERIFY_COUNT"; cat "$VERIFY_DATA/${id}"; od -An -N8 -tx1 /dev/urandom | tr -d " \\n"; ${slow ? `sleep ${SLOW_STEP_SECONDS}; ` : ''}${exit ? `echo "${failedLine(id)}" >&2; ` : ''}exit ${exit}'`;

/** What a failing body says on stderr: its step's result keeps it (DoneRequest.stderrTail). */
export const failedLine = (id: string): string => `${id} failed`;

/**
 * What the script saw: bytes into $O/<id>.<pass>, then the exit status into <id>.<pass>.code (last,
 * so a pass killed half-way leaves no code, and its half-written bytes are not taken as seen).
 */
const saw = (id: string): string => `> "$O/${id}.$P"; echo $? > "$O/${id}.$P.code"`;
const code = (id: string): string => `echo $? > "$O/${id}.$P.code"`;

/** A call-node op's http node: a POST to the harness's key server, keyed as the seed's charge node is. */
const nodeConfig = (id: string): string =>
  `{"method":"POST","url":"'"$VERIFY_HTTP"'/${id}","headers":{"Idempotency-Key":{"$expr":"node.idempotency_key"}}}`;

function line(op: Op): string {
  const { id } = op;
  switch (op.kind) {
    case 'step':
      return `spool step ${id} -- ${body(id, op.exit, isSlowStep(op))} ${saw(id)}`;
    case 'print':
      return `cat "$D/${id}"; ${code(id)}`;
    case 'put-file':
      return [
        `spool step ${id}-make -- sh -c 'echo "${id}-make $$" >> "$VERIFY_COUNT"; cat "$VERIFY_DATA/${id}" > ${id}.bin'`,
        `spool artifact put ${id} ${id}.bin; c=$?`,
        `rm -f ${id}.bin`,
        `spool artifact get ${id} - > "$O/${id}.$P"; echo $c > "$O/${id}.$P.code"`,
      ].join('\n');
    case 'put-stdin':
      return `spool artifact put ${id} - < "$D/${id}"; c=$?\nspool artifact get ${id} - > "$O/${id}.$P"; echo $c > "$O/${id}.$P.code"`;
    case 'refused-put':
      return op.from === 'file'
        ? `head -c ${OVER_LIMIT} /dev/zero > big.bin; spool artifact put ${id} big.bin 2>/dev/null; ${code(id)}`
        : `head -c ${OVER_LIMIT} /dev/zero | spool artifact put ${id} - 2>/dev/null; ${code(id)}`;
    case 'refused-incr':
      return `spool state set ${id}-cell text; spool state incr ${id}-cell 2>/dev/null; ${code(id)}`;
    case 'incr':
      return `spool state incr ${id} --by ${op.by} ${saw(id)}`;
    case 'claim':
      return `spool state add ${id} taken; ${code(id)}`;
    case 'sleep':
      return `spool sleep ${op.ms}ms; ${code(id)}`;
    case 'wait-timeout':
      return `spool wait signal ${id} --timeout 200ms 2>/dev/null; ${code(id)}`;
    case 'wait-signal':
      return `spool wait signal ${id} --timeout ${ANSWER_WITHIN} ${saw(id)}`;
    case 'wait-event':
      return `spool wait event ${id}-type --timeout ${ANSWER_WITHIN} ${saw(id)}`;
    case 'emit':
      return `spool event emit ${id}-type --payload '{"n":1}' ${saw(id)}`;
    case 'lock':
      return `spool lock ${id}-group -- sh -c 'echo "${id} $$" >> "$VERIFY_COUNT"; cat "$VERIFY_DATA/${id}"' ${saw(id)}`;
    case 'call':
      return `spool step ${id}-make -- sh -c 'echo "${id}-make $$" >> "$VERIFY_COUNT"; printf "spool step c -- echo child-${id}\\n" > ${id}.sh'\nspool call ${id}.sh ${saw(id)}`;
    case 'call-node':
      return `spool call-node http --name ${id} --config '${nodeConfig(id)}' ${saw(id)}`;
    case 'call-graph':
      return `spool step ${id}-make -- sh -c 'echo "${id}-make $$" >> "$VERIFY_COUNT"; cp "$VERIFY_DATA/${id}.yaml" ${id}.yaml'\nspool call-graph ${id}.yaml --input '{"x":"${id}"}' ${saw(id)}`;
    case 'activity':
      return `spool activity run ${id} -- sh -c 'echo "${id} $$" >> "$VERIFY_COUNT"; cat "$VERIFY_DATA/${id}"' ${saw(id)}`;
    case 'activity-all':
      return `spool activity submit ${id} -- sh -c 'echo "${id} $$" >> "$VERIFY_COUNT"; cat "$VERIFY_DATA/${id}" >&2; exit 3'; spool activity wait --all 2>/dev/null ${saw(id)}`;
    case 'checkout':
      return `spool checkout ${id}-co 2>/dev/null; c=$?; cat ${id}-co/co.bin > "$O/${id}.$P"; echo $c > "$O/${id}.$P.code"`;
  }
}

/** The workflow as a bash script for the native or the Node client. */
export function bashScript(workflow: Workflow): string {
  return [
    `# replay verifier, seed ${workflow.seed}`,
    'set +e',
    'O="$VERIFY_OUT"; P="$SPOOL_PASS"; D="$VERIFY_DATA"',
    ...workflow.ops.map(line),
    'exit 0',
    '',
  ].join('\n');
}
