package config

import (
	"strings"

	"github.com/databrew/databrew-stage/urlparams"
)

// ignoreParams reads ignore_params and ignore_params_defaults: the
// patterns of URL parameters dropped from every URL, the built-in ones
// first unless turned off. A pattern that would drop the parameter
// parameter pagination counts with is an error.
func (v *validator) ignoreParams(raw rawConfig, sources Sources) []string {
	var out []string
	if raw.IgnoreDefaults == nil || *raw.IgnoreDefaults {
		out = append(out, urlparams.Defaults...)
	}
	for i, p := range raw.IgnoreParams {
		if strings.TrimSpace(p) == "" {
			v.errorf("ignore_params", "entry %d is empty: a pattern names URL parameters, such as \"sid\" or \"utm_*\"", i+1)
			continue
		}
		out = append(out, strings.TrimSpace(p))
	}
	f, err := urlparams.New(out)
	if err != nil {
		return nil // every problem is reported above
	}
	check := func(param, what string) {
		if !f.Matches(param) {
			return
		}
		key := "ignore_params"
		if !mustMatch(raw.IgnoreParams, param) {
			key = "ignore_params_defaults"
		}
		v.errorf(key, "a pattern drops %q, the parameter %s: its pages could not be told apart", param, what)
	}
	if pg := sources.Pages; pg != nil {
		check(pg.Param, "listing.pages counts with")
	}
	if c := sources.Cursor; c != nil && c.Param != "" {
		check(c.Param, "listing.next_page carries its cursor in")
	}
	return out
}

// mustMatch reports whether one of the patterns matches name.
func mustMatch(patterns []string, name string) bool {
	f, err := urlparams.New(patterns)
	return err == nil && f.Matches(name)
}
