package commands

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// A command with many flags lists them in sections in its help: each flag
// names its section in an annotation, and the command's usage template lays
// the local flags out section by section, in the order the command gave
// them, with the flags of no section (--help) last under "Flags".

// flagGroupKey is the annotation that names a flag's help section.
const flagGroupKey = "jobctl_help_group"

// usageFlagsSection is the part of cobra's usage template that lists the
// local flags, which groupFlags replaces.
const usageFlagsSection = `{{if .HasAvailableLocalFlags}}

Flags:
{{.LocalFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}`

func init() {
	cobra.AddTemplateFunc("groupedFlagUsages", groupedFlagUsages)
}

// groupFlags puts each flag of cmd in the section sections names it in,
// sections in the order given, and has cmd's help list them so. It panics
// on a name that is not a flag of cmd: the help would otherwise be wrong
// without a word.
func groupFlags(cmd *cobra.Command, sections []flagSection) {
	var order []string
	for _, s := range sections {
		order = append(order, s.title)
		for _, name := range s.flags {
			f := cmd.Flags().Lookup(name)
			if f == nil {
				panic("groupFlags: " + cmd.Name() + " has no flag --" + name)
			}
			if f.Annotations == nil {
				f.Annotations = map[string][]string{}
			}
			f.Annotations[flagGroupKey] = []string{s.title}
		}
	}
	tmpl := cmd.UsageTemplate()
	if !strings.Contains(tmpl, usageFlagsSection) {
		panic("groupFlags: the usage template has no flags section to replace")
	}
	cmd.SetUsageTemplate(strings.Replace(tmpl, usageFlagsSection,
		`{{if .HasAvailableLocalFlags}}{{groupedFlagUsages .LocalFlags "`+strings.Join(order, "|")+`"}}{{end}}`, 1))
}

// flagSection is one section of a command's flags in its help.
type flagSection struct {
	title string // "Dispatch", shown as "Dispatch flags:"
	flags []string
}

// groupedFlagUsages lists fs's visible flags section by section; order is
// the section titles, separated by |. Each section is aligned on its own.
func groupedFlagUsages(fs *pflag.FlagSet, order string) string {
	titles := append(strings.Split(order, "|"), "")
	sets := map[string]*pflag.FlagSet{}
	for _, t := range titles {
		sets[t] = pflag.NewFlagSet(t, pflag.ContinueOnError)
	}
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		title := ""
		if g := f.Annotations[flagGroupKey]; len(g) > 0 {
			title = g[0]
		}
		if s, ok := sets[title]; ok {
			s.AddFlag(f)
		} else {
			sets[""].AddFlag(f)
		}
	})
	var b strings.Builder
	for _, t := range titles {
		usages := strings.TrimRight(sets[t].FlagUsages(), " \n")
		if usages == "" {
			continue
		}
		heading := "Flags:"
		if t != "" {
			heading = t + " flags:"
		}
		b.WriteString("\n\n" + heading + "\n" + usages)
	}
	return b.String()
}
