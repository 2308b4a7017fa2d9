package app

import "go.uber.org/zap/zapcore"

// uniqueKeys is a zap core that writes each key once per line, so the JSON
// lines stay valid for parsers that reject duplicate keys: a field whose key
// the logger already carries (from With) or that came earlier in the same
// call is dropped; the first value wins. Keys inside a namespace are left
// alone.
type uniqueKeys struct {
	zapcore.Core
	keys map[string]struct{}
	// nested: a namespace was opened; later fields belong to it.
	nested bool
}

func newUniqueKeys(c zapcore.Core) zapcore.Core { return &uniqueKeys{Core: c} }

// filter returns the fields of fs to write and the keys known after them.
func (u *uniqueKeys) filter(fs []zapcore.Field) ([]zapcore.Field, map[string]struct{}, bool) {
	keys := make(map[string]struct{}, len(u.keys)+len(fs))
	for k := range u.keys {
		keys[k] = struct{}{}
	}
	nested := u.nested
	out := fs[:0:0]
	for _, f := range fs {
		if nested {
			out = append(out, f)
			continue
		}
		if _, dup := keys[f.Key]; dup {
			continue
		}
		keys[f.Key] = struct{}{}
		out = append(out, f)
		if f.Type == zapcore.NamespaceType {
			nested = true
		}
	}
	return out, keys, nested
}

func (u *uniqueKeys) With(fs []zapcore.Field) zapcore.Core {
	keep, keys, nested := u.filter(fs)
	return &uniqueKeys{Core: u.Core.With(keep), keys: keys, nested: nested}
}

func (u *uniqueKeys) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if u.Enabled(e.Level) {
		return ce.AddCore(e, u)
	}
	return ce
}

func (u *uniqueKeys) Write(e zapcore.Entry, fs []zapcore.Field) error {
	keep, _, _ := u.filter(fs)
	return u.Core.Write(e, keep)
}
