import type { Command } from 'commander';
import { UsageError } from '../../common/errors.js';

/** The in-script verbs (not commander commands: they start once per durable call) and their subcommands. */
const SCRIPT_WORDS: Record<string, string[]> = {
  step: [],
  sleep: [],
  wait: ['signal', 'event'],
  lock: [],
  state: ['get', 'set', 'add', 'incr', 'cas', 'delete', 'list', 'version'],
  activity: ['submit', 'run', 'wait', 'collect', 'wait-all'],
  spawn: [],
  call: [],
  output: ['set'],
  annotate: [],
  artifact: ['put', 'get', 'list'],
  checkout: [],
};

/** Every first word, and the words each may take second, from the program itself. */
function words(program: Command): Map<string, string[]> {
  const table = new Map<string, string[]>(Object.entries(SCRIPT_WORDS));
  for (const command of program.commands) {
    const name = command.name();
    const subcommands = command.commands.map((sub) => sub.name());
    const flags = command.options.map((option) => option.long).filter((flag): flag is string => flag !== undefined);
    table.set(name, [...new Set([...(table.get(name) ?? []), ...subcommands, ...flags])]);
  }
  return table;
}

/** `spool completion bash|zsh|fish`: a script the shell sources to complete spool's commands and flags. */
export function completionScript(shell: string, program: Command): string {
  const table = words(program);
  const first = [...table.keys()].sort().join(' ');
  switch (shell) {
    case 'bash':
    case 'zsh': {
      const cases = [...table.entries()]
        .filter(([, second]) => second.length > 0)
        .map(([word, second]) => `    ${word}) COMPREPLY=($(compgen -W "${second.join(' ')}" -- "$cur")) ;;`)
        .join('\n');
      return `${shell === 'zsh' ? 'autoload -U +X bashcompinit && bashcompinit\n' : ''}# spool completion ${shell}: source this (e.g. in ~/.${shell}rc: source <(spool completion ${shell}))
_spool() {
  local cur=\${COMP_WORDS[COMP_CWORD]}
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "${first}" -- "$cur"))
    return
  fi
  case "\${COMP_WORDS[1]}" in
${cases}
    *) COMPREPLY=($(compgen -f -- "$cur")) ;;
  esac
}
complete -F _spool spool
`;
    }
    case 'fish': {
      const lines = [`# spool completion fish: source this (spool completion fish | source)`, 'complete -c spool -f'];
      for (const word of [...table.keys()].sort()) lines.push(`complete -c spool -n '__fish_use_subcommand' -a '${word}'`);
      for (const [word, second] of table) {
        const subs = second.filter((entry) => !entry.startsWith('--'));
        const flags = second.filter((entry) => entry.startsWith('--')).map((flag) => flag.slice(2));
        if (subs.length > 0) lines.push(`complete -c spool -n '__fish_seen_subcommand_from ${word}' -a '${subs.join(' ')}'`);
        for (const flag of flags) lines.push(`complete -c spool -n '__fish_seen_subcommand_from ${word}' -l ${flag}`);
      }
      return `${lines.join('\n')}\n`;
    }
    default:
      throw new UsageError(`spool completion takes bash, zsh or fish, not '${shell}'`);
  }
}
