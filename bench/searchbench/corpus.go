package main

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// doc is one document of the corpus.
type doc struct{ id, text string }

// readCorpus returns Debian's English long package descriptions (apt's
// Translation-en lists, read now and never stored), or, when apt has none,
// n generated documents; source says which.
func readCorpus(n int) (docs []doc, source string) {
	files, _ := filepath.Glob("/var/lib/apt/lists/*_main_i18n_Translation-en*")
	slices.SortStableFunc(files, func(a, b string) int { // the release's list first, then its updates
		return cmp.Compare(len(a), len(b))
	})
	seen := map[string]bool{}
	for _, f := range files {
		out, err := exec.Command("/usr/lib/apt/apt-helper", "cat-file", f).Output()
		if err != nil {
			continue
		}
		for _, d := range parseTranslation(out) {
			if !seen[d.id] { // a package of the updates or security list: the release's description
				seen[d.id] = true
				docs = append(docs, d)
			}
		}
		source += " " + filepath.Base(f)
	}
	if len(docs) == 0 {
		fmt.Fprintln(os.Stderr, "searchbench: no Translation-en list under /var/lib/apt/lists (run apt-get update -o Acquire::Languages=en): GENERATED TEXT instead")
		return generated(n), "GENERATED text (no Translation-en list found)"
	}
	if n > 0 && n < len(docs) {
		docs = docs[:n]
	}
	return docs, "Debian Translation-en:" + source
}

// parseTranslation reads the records of a Translation-en file: the short
// description line and the long description, one document per package.
func parseTranslation(b []byte) []doc {
	var out []doc
	var name string
	var text strings.Builder
	flush := func() {
		if name != "" && text.Len() > 0 {
			out = append(out, doc{id: name, text: text.String()})
		}
		name = ""
		text.Reset()
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			flush()
		case strings.HasPrefix(line, "Package: "):
			name = strings.TrimPrefix(line, "Package: ")
		case strings.HasPrefix(line, "Description-en: "):
			text.WriteString(strings.TrimPrefix(line, "Description-en: "))
		case strings.HasPrefix(line, " "):
			if l := strings.TrimPrefix(line, " "); l != "." {
				text.WriteByte(' ') // RediSearch 1.2 does not split words at a newline
				text.WriteString(l)
			}
		}
	}
	flush()
	return out
}

// generated returns n documents of 50 words drawn from a skewed
// vocabulary of 20,000 made-up words.
func generated(n int) []doc {
	if n <= 0 {
		n = 64000
	}
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([]doc, n)
	for i := range out {
		var b strings.Builder
		for range 50 {
			u := rng.Float64()
			fmt.Fprintf(&b, "w%s ", strconv.FormatInt(int64(u*u*u*20000), 36))
		}
		out[i] = doc{id: "g" + strconv.Itoa(i), text: b.String()}
	}
	return out
}
