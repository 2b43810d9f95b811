package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/rivetmetal/rivet/core/client"
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

// completeLeaf prints a client command's candidates for the word being
// completed: its flags after a "-"; the nodes' names (from the API, within
// a few seconds, nothing on any error) where it takes NODE arguments;
// otherwise its flags, so that `rivet node list <TAB>` offers them without
// a prefix.
func completeLeaf(c *cli.Context, argsUsage string) {
	if n := len(os.Args); n >= 2 && strings.HasPrefix(os.Args[n-2], "-") || !strings.HasPrefix(argsUsage, "NODE") {
		for _, f := range c.Command.VisibleFlags() {
			for _, name := range f.Names() {
				if len(name) > 1 {
					fmt.Fprintln(c.App.Writer, "--"+name)
				}
			}
		}
		return
	}
	api, err := newAPIClient(c)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(c.Context, 3*time.Second)
	defer cancel()
	nodes, err := api.List(ctx, client.Nodes, client.ListOptions{Fields: []string{"uuid", "name"}})
	if err != nil {
		return
	}
	for _, n := range nodes {
		name := n.String("name")
		if name == "" {
			name = n.String("uuid")
		}
		fmt.Fprintln(c.App.Writer, name)
	}
}
