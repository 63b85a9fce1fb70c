// Package resident tells which parts of a running Go program's executable
// are in memory: the pages of its file mappings that /proc/PID/pagemap says
// are present, attributed to the Go packages whose symbols they hold. RSS
// counts a page of the executable once anything on it, or near it, was read;
// this says whose code and data those pages are.
package resident

import (
	"bufio"
	"cmp"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

const (
	errOpenExe   = "cannot read the program's executable"
	errMaps      = "cannot read the program's mappings"
	errPagemap   = "cannot read the program's page map"
	errNoMapping = "the program maps no part of its executable"
)

// pageSize is Linux's on the machines this runs on; pagemap has one entry
// per page of it.
const pageSize = 4096

// presentBit of a pagemap entry says the page is in memory.
const presentBit = 1 << 63

// A Part is the resident bytes of one package, or of a section's bytes that
// no symbol names (such as the tables of the pclntab).
type Part struct {
	Name  string
	Bytes uint64
}

// By is what the resident bytes are counted for.
type By int

const (
	// Packages counts bytes for the Go package of the symbol that holds
	// them, and bytes no symbol holds for their section. A stripped
	// executable has no symbols: its parts are its sections.
	Packages By = iota
	// Sections counts bytes for the ELF section that holds them, so that
	// programs compare whether stripped or not.
	Sections
)

// Of returns the resident parts of the executable process pid runs, the
// largest first.
func Of(pid int, by By) ([]Part, error) {
	proc := "/proc/" + strconv.Itoa(pid)
	exe, err := os.Readlink(proc + "/exe")
	if err != nil {
		return nil, errors.Wrap(err, errOpenExe)
	}
	f, err := elf.Open(proc + "/exe")
	if err != nil {
		return nil, errors.Wrap(err, errOpenExe)
	}
	defer f.Close() //nolint:errcheck // Only read.
	maps, err := mappingsOf(proc+"/maps", exe)
	if err != nil {
		return nil, errors.Wrap(err, errMaps)
	}
	if len(maps) == 0 {
		return nil, errors.New(errNoMapping)
	}
	pages, err := residentPages(proc+"/pagemap", maps, f)
	if err != nil {
		return nil, errors.Wrap(err, errPagemap)
	}
	return attribute(pages, spansOf(f, by)), nil
}

// A mapping is one of the executable's mappings: where it is in memory and
// in the file.
type mapping struct {
	start, end, offset uint64
}

// mappingsOf reads the mappings of the file exe from a maps file.
func mappingsOf(path, exe string) ([]mapping, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close() //nolint:errcheck // Only read.
	var out []mapping
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) < 6 || strings.Join(fields[5:], " ") != exe {
			continue
		}
		from, to, _ := strings.Cut(fields[0], "-")
		var m mapping
		var errs [3]error
		m.start, errs[0] = strconv.ParseUint(from, 16, 64)
		m.end, errs[1] = strconv.ParseUint(to, 16, 64)
		m.offset, errs[2] = strconv.ParseUint(fields[2], 16, 64)
		if err := errors.Join(errs[:]...); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, s.Err()
}

// residentPages returns the executable's virtual address (as the ELF file
// has it) of each of its resident pages.
func residentPages(path string, maps []mapping, f *elf.File) ([]uint64, error) {
	pm, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer pm.Close() //nolint:errcheck // Only read.
	var out []uint64
	for _, m := range maps {
		n := (m.end - m.start) / pageSize
		entries := make([]byte, 8*n)
		if _, err := pm.ReadAt(entries, int64(m.start/pageSize*8)); err != nil { //nolint:gosec // Addresses of a mapping fit.
			return nil, err
		}
		for i := range n {
			if binary.LittleEndian.Uint64(entries[8*i:])&presentBit == 0 {
				continue
			}
			if v, ok := vaddrOf(f, m.offset+i*pageSize); ok {
				out = append(out, v)
			}
		}
	}
	return out, nil
}

// vaddrOf is the virtual address the ELF file gives its byte at offset, in
// whichever loaded segment holds it; a position-independent executable is
// mapped elsewhere, but its symbols have these addresses.
func vaddrOf(f *elf.File, offset uint64) (uint64, bool) {
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && offset >= p.Off && offset < p.Off+p.Filesz {
			return offset - p.Off + p.Vaddr, true
		}
	}
	return 0, false
}

// A span is a range of addresses and whose they are.
type span struct {
	start, end uint64
	owner      string
}

// spansOf returns ranges that do not overlap, sorted: each symbol's, named
// by its package and running until it ends or the next symbol begins, then
// the bytes of each loaded section that no symbol covers, named by the
// section.
func spansOf(f *elf.File, by By) []span {
	var all []elf.Symbol
	if by == Packages {
		all, _ = f.Symbols() // A stripped executable has none.
	}
	// Each symbol kept is named by its package once.
	type symbol struct {
		elf.Symbol
		owner string
	}
	var syms []symbol
	for _, s := range all {
		if int(s.Section) <= 0 || int(s.Section) >= len(f.Sections) || s.Value == 0 {
			continue
		}
		if owner := packageOf(s.Name); owner != "" {
			syms = append(syms, symbol{Symbol: s, owner: owner})
		}
	}
	slices.SortFunc(syms, func(a, b symbol) int { return cmp.Compare(a.Value, b.Value) })
	var named []span
	for i, s := range syms {
		sec := f.Sections[s.Section]
		end := sec.Addr + sec.Size
		if s.Size > 0 {
			end = min(end, s.Value+s.Size)
		}
		if i+1 < len(syms) {
			end = min(end, syms[i+1].Value)
		}
		if end > s.Value {
			named = append(named, span{start: s.Value, end: end, owner: s.owner})
		}
	}
	out := slices.Clone(named)
	for _, sec := range f.Sections {
		if sec.Flags&elf.SHF_ALLOC == 0 || sec.Size == 0 {
			continue
		}
		at, end := sec.Addr, sec.Addr+sec.Size
		for i := first(named, at); i < len(named) && named[i].start < end; i++ {
			if named[i].start > at {
				out = append(out, span{start: at, end: named[i].start, owner: sec.Name})
			}
			at = max(at, named[i].end)
		}
		if at < end {
			out = append(out, span{start: at, end: end, owner: sec.Name})
		}
	}
	slices.SortFunc(out, func(a, b span) int { return cmp.Compare(a.start, b.start) })
	return out
}

// first is the index of the first of sorted spans that ends after at.
func first(spans []span, at uint64) int {
	i, _ := slices.BinarySearchFunc(spans, at, func(s span, at uint64) int {
		if s.end <= at {
			return -1
		}
		return 1
	})
	return i
}

// packageOf is the Go package a symbol belongs to, or the kind of a
// linker-made symbol ("go:string", "go:func"). The runtime's markers of
// where tables begin (runtime.pclntab, runtime.types) name none: the bytes
// after them are the section's.
func packageOf(name string) string {
	if markers[name] {
		return ""
	}
	for _, p := range []string{"type:.eq.", "type:.hash.", "type:", "go:itab.", "go:info."} {
		name = strings.TrimPrefix(name, p)
	}
	name = strings.TrimLeft(name, "*(")
	if k, _, ok := strings.Cut(name, "."); ok && strings.HasPrefix(name, "go:") {
		return k
	}
	// A package path ends at the first dot after its last slash; what
	// follows is the symbol, which may itself hold slashes in a generic
	// type's arguments.
	head, _, _ := strings.Cut(name, "[")
	slash := strings.LastIndex(head, "/")
	dot := strings.Index(head[slash+1:], ".")
	if dot < 0 {
		return head
	}
	return head[:slash+1+dot]
}

// markers are the runtime's symbols that only say where a table begins.
var markers = map[string]bool{
	"runtime.text": true, "runtime.etext": true, "runtime.rodata": true, "runtime.erodata": true,
	"runtime.types": true, "runtime.etypes": true, "runtime.pclntab": true, "runtime.epclntab": true,
	"runtime.findfunctab": true, "runtime.typelink": true, "runtime.itablink": true,
	"runtime.noptrdata": true, "runtime.enoptrdata": true, "runtime.data": true, "runtime.edata": true,
	"runtime.bss": true, "runtime.ebss": true, "runtime.noptrbss": true, "runtime.enoptrbss": true,
}

// attribute counts each resident page's bytes for the spans that hold them.
func attribute(pages []uint64, spans []span) []Part {
	bytes := map[string]uint64{}
	for _, p := range pages {
		for i := first(spans, p); i < len(spans) && spans[i].start < p+pageSize; i++ {
			bytes[spans[i].owner] += min(spans[i].end, p+pageSize) - max(spans[i].start, p)
		}
	}
	out := make([]Part, 0, len(bytes))
	for name, n := range bytes {
		out = append(out, Part{Name: name, Bytes: n})
	}
	slices.SortFunc(out, func(a, b Part) int { return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), cmp.Compare(a.Name, b.Name)) })
	return out
}

// String says a part's size in KiB.
func (p Part) String() string { return fmt.Sprintf("%8.0f KiB  %s", float64(p.Bytes)/1024, p.Name) }
