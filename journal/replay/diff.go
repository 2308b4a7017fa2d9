package replay

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// fieldDiff is one field whose value differs between two states: a is the
// folded side, b the stored side.
type fieldDiff struct {
	path string
	a, b string
}

// absent shows a field or element that one side does not have.
const absent = "<absent>"

// diffMessages returns the paths (proto field names, map keys in brackets,
// list indexes) where the messages a and b differ, in field order.
func diffMessages(path string, a, b protoreflect.Message) []fieldDiff {
	var out []fieldDiff
	diffMessage(path, a, b, &out)
	return out
}

func diffMessage(path string, a, b protoreflect.Message, out *[]fieldDiff) {
	fields := a.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		p := joinPath(path, string(fd.Name()))
		switch {
		case fd.IsMap():
			diffMap(p, fd, a.Get(fd).Map(), b.Get(fd).Map(), out)
		case fd.IsList():
			diffList(p, fd, a.Get(fd).List(), b.Get(fd).List(), out)
		case fd.Message() != nil:
			ha, hb := a.Has(fd), b.Has(fd)
			switch {
			case !ha && !hb:
			case ha != hb:
				*out = append(*out, fieldDiff{path: p, a: presence(ha), b: presence(hb)})
			default:
				diffMessage(p, a.Get(fd).Message(), b.Get(fd).Message(), out)
			}
		default:
			if va, vb := a.Get(fd), b.Get(fd); !va.Equal(vb) {
				*out = append(*out, fieldDiff{path: p, a: showValue(fd, va), b: showValue(fd, vb)})
			}
		}
	}
}

func diffMap(path string, fd protoreflect.FieldDescriptor, a, b protoreflect.Map, out *[]fieldDiff) {
	keys := map[string]protoreflect.MapKey{}
	collect := func(k protoreflect.MapKey, _ protoreflect.Value) bool {
		keys[k.String()] = k
		return true
	}
	a.Range(collect)
	b.Range(collect)
	names := make([]string, 0, len(keys))
	for name := range keys {
		names = append(names, name)
	}
	sort.Strings(names)
	vd := fd.MapValue()
	for _, name := range names {
		k := keys[name]
		p := fmt.Sprintf("%s[%s]", path, name)
		ha, hb := a.Has(k), b.Has(k)
		switch {
		case ha != hb:
			*out = append(*out, fieldDiff{path: p, a: presence(ha), b: presence(hb)})
		case vd.Message() != nil:
			diffMessage(p, a.Get(k).Message(), b.Get(k).Message(), out)
		default:
			if va, vb := a.Get(k), b.Get(k); !va.Equal(vb) {
				*out = append(*out, fieldDiff{path: p, a: showValue(vd, va), b: showValue(vd, vb)})
			}
		}
	}
}

func diffList(path string, fd protoreflect.FieldDescriptor, a, b protoreflect.List, out *[]fieldDiff) {
	for i := 0; i < max(a.Len(), b.Len()); i++ {
		p := fmt.Sprintf("%s[%d]", path, i)
		switch {
		case i >= a.Len():
			*out = append(*out, fieldDiff{path: p, a: absent, b: showValue(fd, b.Get(i))})
		case i >= b.Len():
			*out = append(*out, fieldDiff{path: p, a: showValue(fd, a.Get(i)), b: absent})
		case fd.Message() != nil:
			diffMessage(p, a.Get(i).Message(), b.Get(i).Message(), out)
		default:
			if va, vb := a.Get(i), b.Get(i); !va.Equal(vb) {
				*out = append(*out, fieldDiff{path: p, a: showValue(fd, va), b: showValue(fd, vb)})
			}
		}
	}
}

func presence(has bool) string {
	if has {
		return "<set>"
	}
	return absent
}

// showValue shows a scalar field's value: strings quoted, enums by name,
// bytes by length (a pod's JSON is long).
func showValue(fd protoreflect.FieldDescriptor, v protoreflect.Value) string {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return strconv.Quote(v.String())
	case protoreflect.BytesKind:
		return fmt.Sprintf("<%d bytes>", len(v.Bytes()))
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			return string(ev.Name())
		}
		return strconv.Itoa(int(v.Enum()))
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return "<set>"
	}
	return fmt.Sprint(v.Interface())
}

// diffJSON returns the paths where two values, encoded as JSON and decoded
// again, differ: map keys joined with dots, list indexes in brackets.
func diffJSON(path string, a, b any) ([]fieldDiff, error) {
	ta, err := jsonTree(a)
	if err != nil {
		return nil, err
	}
	tb, err := jsonTree(b)
	if err != nil {
		return nil, err
	}
	var out []fieldDiff
	diffTree(path, ta, tb, &out)
	return out, nil
}

func jsonTree(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var t any
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, err
	}
	return t, nil
}

func diffTree(path string, a, b any, out *[]fieldDiff) {
	switch ta := a.(type) {
	case map[string]any:
		tb, ok := b.(map[string]any)
		if !ok {
			break
		}
		var keys []string
		for k := range ta {
			keys = append(keys, k)
		}
		for k := range tb {
			if _, ok := ta[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			va, oka := ta[k]
			vb, okb := tb[k]
			p := joinPath(path, k)
			if oka != okb {
				*out = append(*out, fieldDiff{path: p, a: showJSON(va, oka), b: showJSON(vb, okb)})
				continue
			}
			diffTree(p, va, vb, out)
		}
		return
	case []any:
		tb, ok := b.([]any)
		if !ok {
			break
		}
		for i := 0; i < max(len(ta), len(tb)); i++ {
			p := fmt.Sprintf("%s[%d]", path, i)
			if i >= len(ta) || i >= len(tb) {
				*out = append(*out, fieldDiff{path: p, a: showJSON(at(ta, i)), b: showJSON(at(tb, i))})
				continue
			}
			diffTree(p, ta[i], tb[i], out)
		}
		return
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		*out = append(*out, fieldDiff{path: path, a: string(ja), b: string(jb)})
	}
}

func at(l []any, i int) (any, bool) {
	if i < len(l) {
		return l[i], true
	}
	return nil, false
}

func showJSON(v any, ok bool) string {
	if !ok {
		return absent
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
