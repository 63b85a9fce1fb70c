// Command resident prints which Go packages' pages of a running program's
// executable are in memory, the largest first; see package resident.
package main

import (
	"fmt"
	"os"

	"github.com/alecthomas/kingpin/v2"

	"github.com/knative-lambda/provider-knative-lambda/cluster/bench/resident"
)

func main() {
	var (
		app = kingpin.New("resident", "Print which packages' pages of a running Go program's executable are resident.")
		pid = app.Arg("pid", "The program's process id.").Required().Int()
		top = app.Flag("top", "Parts printed; the rest are summed.").Default("40").Int()
		by  = app.Flag("sections", "Count bytes by ELF section instead of by package.").Bool()
	)
	kingpin.MustParse(app.Parse(os.Args[1:]))
	how := resident.Packages
	if *by {
		how = resident.Sections
	}
	parts, err := resident.Of(*pid, how)
	if err != nil {
		fmt.Fprintln(os.Stderr, "resident:", err)
		os.Exit(1)
	}
	var total, rest uint64
	for i, p := range parts {
		total += p.Bytes
		if i < *top {
			fmt.Println(p)
			continue
		}
		rest += p.Bytes
	}
	fmt.Println(resident.Part{Name: fmt.Sprintf("%d more parts", max(0, len(parts)-*top)), Bytes: rest})
	fmt.Println(resident.Part{Name: "in all", Bytes: total})
}
