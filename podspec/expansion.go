package podspec

import "strings"

// expand replaces the $(NAME) references in s as the kubelet does for env
// values, command and args (the semantics of k8s.io/kubernetes'
// third_party/forked/golang/expansion):
//
//   - $(NAME) becomes lookup(NAME) when lookup knows NAME, and stays as
//     written when it does not;
//   - $$ is an escaped $ and becomes one $, so $$(NAME) is the literal
//     text $(NAME);
//   - a $ followed by anything else, a $( with no closing ), and a $ at the
//     very end are kept as they are.
//
// A reference's name is everything up to the first ')', whatever it holds.
// Substituted values are not expanded again.
func expand(s string, lookup func(name string) (string, bool)) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '$' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		switch next := s[i+1]; next {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				// No closing parenthesis: "$(" is literal, and the scan
				// goes on after it.
				b.WriteString("$(")
				i++
				continue
			}
			name := s[i+2 : i+2+end]
			if v, ok := lookup(name); ok {
				b.WriteString(v)
			} else {
				b.WriteString("$(" + name + ")")
			}
			i += 2 + end
		default:
			b.WriteByte('$')
			b.WriteByte(next)
			i++
		}
	}
	return b.String()
}

// lookupIn looks names up in maps, the first that has the name winning.
func lookupIn(maps ...map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		for _, m := range maps {
			if v, ok := m[name]; ok {
				return v, true
			}
		}
		return "", false
	}
}

// expandAll expands every string of list (nil stays nil).
func expandAll(list []string, lookup func(string) (string, bool)) []string {
	if list == nil {
		return nil
	}
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = expand(s, lookup)
	}
	return out
}
