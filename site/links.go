package site

import (
	"fmt"
	"html"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

var linkRe = regexp.MustCompile(`(?:href|src)="([^"]*)"`)
var idRe = regexp.MustCompile(` id="([^"]*)"`)

// CheckLinks reports every link of the site under dir that does not
// resolve: a local file that is not there, a fragment no element has, or
// any link that leaves the file system (the site needs no network). It
// returns how many links it checked.
func CheckLinks(dir string) (int, []string, error) {
	var bad []string
	ids := map[string][]string{}
	pages := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".html") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		pages[path] = string(b)
		for _, m := range idRe.FindAllStringSubmatch(string(b), -1) {
			ids[path] = append(ids[path], m[1])
		}
		return nil
	})
	if err != nil {
		return 0, nil, err
	}
	n := 0
	for path, text := range pages {
		for _, m := range linkRe.FindAllStringSubmatch(text, -1) {
			n++
			ref := html.UnescapeString(m[1])
			u, err := url.Parse(ref)
			if err != nil || u.Scheme != "" || u.Host != "" || strings.HasPrefix(ref, "/") {
				bad = append(bad, fmt.Sprintf("%s: %s leaves the site", rel(dir, path), ref))
				continue
			}
			target := path
			if u.Path != "" {
				target = filepath.Join(filepath.Dir(path), filepath.FromSlash(u.Path))
				if _, err := os.Stat(target); err != nil {
					bad = append(bad, fmt.Sprintf("%s: %s: no such file", rel(dir, path), ref))
					continue
				}
			}
			if u.Fragment != "" && strings.HasSuffix(target, ".html") && !slices.Contains(ids[target], u.Fragment) {
				bad = append(bad, fmt.Sprintf("%s: %s: no element with that id", rel(dir, path), ref))
			}
		}
	}
	slices.Sort(bad)
	return n, bad, nil
}

func rel(dir, path string) string {
	if r, err := filepath.Rel(dir, path); err == nil {
		return r
	}
	return path
}
