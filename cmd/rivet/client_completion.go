package main

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

// Completion scripts. Each asks the binary itself for candidates through
// urfave's hidden --generate-bash-completion flag (EnableBashCompletion),
// so they never go stale as commands are added.
const (
	bashCompletion = `# rivet completion for bash: source <(rivet completion bash)
_rivet_complete() {
    local cur="${COMP_WORDS[COMP_CWORD]}" words
    if [[ "$cur" == -* ]]; then
        words=$("${COMP_WORDS[0]}" "${COMP_WORDS[@]:1:COMP_CWORD-1}" "$cur" --generate-bash-completion 2>/dev/null)
    else
        words=$("${COMP_WORDS[0]}" "${COMP_WORDS[@]:1:COMP_CWORD-1}" --generate-bash-completion 2>/dev/null)
    fi
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o bashdefault -o default -F _rivet_complete rivet
`
	zshCompletion = `#compdef rivet
# rivet completion for zsh: source <(rivet completion zsh)
_rivet() {
    local -a candidates
    if [[ "${words[CURRENT]}" == -* ]]; then
        candidates=(${(f)"$(${words[1]} ${words[2,CURRENT-1]} ${words[CURRENT]} --generate-bash-completion 2>/dev/null)"})
    else
        candidates=(${(f)"$(${words[1]} ${words[2,CURRENT-1]} --generate-bash-completion 2>/dev/null)"})
    fi
    compadd -a candidates
}
compdef _rivet rivet
`
	fishCompletion = `# rivet completion for fish: rivet completion fish | source
function __rivet_complete
    set -l tokens (commandline -opc)
    set -l current (commandline -ct)
    if string match -q -- '-*' $current
        $tokens $current --generate-bash-completion 2>/dev/null
    else
        $tokens --generate-bash-completion 2>/dev/null
    end
end
complete -c rivet -f -a '(__rivet_complete)'
`
)

func completionCommand() *cli.Command {
	scripts := map[string]string{"bash": bashCompletion, "zsh": zshCompletion, "fish": fishCompletion}
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script: source <(rivet completion bash)",
		ArgsUsage: "bash|zsh|fish",
		Action: func(c *cli.Context) error {
			script, ok := scripts[c.Args().First()]
			if !ok || c.NArg() != 1 {
				return cli.Exit(fmt.Sprintf("give one shell: bash, zsh or fish (got %q)", c.Args().Slice()), exitClientUsage)
			}
			_, err := fmt.Fprint(c.App.Writer, script)
			return err
		},
	}
}
