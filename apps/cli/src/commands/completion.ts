// `deskline completion bash|zsh`: a completion script written from the command tree itself, so
// every command and flag the CLI has is completed, and nothing it lacks.
import type { Command } from "commander";
import { UsageError } from "../errors.js";
import { writeLine } from "../output.js";
import { examples } from "./kit.js";

/** Every command path (`contacts import`) with its subcommands and flags. */
function walk(command: Command, path: string[], out: Map<string, string[]>): void {
  const words = [
    ...command.commands.map((sub) => sub.name()),
    ...command.options.filter((option) => !option.hidden).flatMap((option) => [option.long, option.short]),
    "--help",
  ].filter((word): word is string => Boolean(word));
  out.set(path.join(" "), words);
  for (const sub of command.commands) walk(sub, [...path, sub.name()], out);
}

export function bashScript(program: Command): string {
  const table = new Map<string, string[]>();
  walk(program, [], table);
  const cases = [...table].map(([path, words]) => `    "${path}") words="${words.join(" ")}" ;;`).join("\n");
  return `# deskline completion for bash (and zsh through bashcompinit).
# Load it with:  source <(deskline completion bash)
_deskline() {
  local cur path="" word i words
  cur="\${COMP_WORDS[COMP_CWORD]}"
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="\${COMP_WORDS[i]}"
    case "$word" in
      --api-key|--base-url|--profile) ((i++)) ;;
      -*) ;;
      *) if _deskline_words "\${path:+$path }$word" >/dev/null; then path="\${path:+$path }$word"; fi ;;
    esac
  done
  words="$(_deskline_words "$path")"
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
_deskline_words() {
  local words=""
  case "$1" in
${cases}
    *) return 1 ;;
  esac
  echo "$words"
}
complete -o default -F _deskline deskline
`;
}

export function zshScript(program: Command): string {
  return `# deskline completion for zsh. Load it with:  source <(deskline completion zsh)
autoload -U +X compinit && compinit
autoload -U +X bashcompinit && bashcompinit
${bashScript(program)}`;
}

/** The command at the top of the tree `command` hangs in. */
function rootOf(command: Command): Command {
  let root = command;
  while (root.parent) root = root.parent;
  return root;
}

export function register(completion: Command): void {
  examples(
    completion.argument("[shell]", "bash or zsh", "bash").action(async (shell: string) => {
      if (shell !== "bash" && shell !== "zsh")
        throw new UsageError(`no completion for '${shell}': bash or zsh`);
      // The root program, with every group loaded: program.ts loads them all for this group
      // (its `loadsEveryGroup`), so this module needs nothing from it.
      const program = rootOf(completion);
      writeLine(shell === "bash" ? bashScript(program) : zshScript(program));
    }),
    "source <(deskline completion bash)      # add to ~/.bashrc",
    "deskline completion zsh > ~/.zsh/_deskline_completion && echo 'source ~/.zsh/_deskline_completion' >> ~/.zshrc",
  );
}
