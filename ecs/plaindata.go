package ecs

import (
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
)

// PlainDataError is returned ([Register], [History.RegisterType],
// [CheckPlainData], and the schema builder of package netsync) when a
// component type cannot be copied bit for bit because it holds a reference (pointer, slice, map, string, interface,
// channel, function or unsafe pointer). Copying such a value into history
// would share, not snapshot, what it points to.
type PlainDataError struct {
	Type  reflect.Type // the component type being registered
	Field string       // path of the offending field, such as "Weapon.Ammo"
	Kind  reflect.Kind // the kind that is not plain data
}

// Error names the type, the field and its kind.
func (e *PlainDataError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("ecs: component %v is a %v, not plain data", e.Type, e.Kind)
	}
	return fmt.Sprintf("ecs: component %v is not plain data: field %s is a %v", e.Type, e.Field, e.Kind)
}

// byteRange is the memory of one field of plain data, without padding.
type byteRange struct {
	off, len uintptr
	field    string
	kind     reflect.Kind
}

// CheckPlainData returns a [*PlainDataError] naming the first field of t
// that is not plain data (a pointer, slice, map, string, interface,
// channel, function or unsafe pointer, at any depth), and nil when every
// field is: what [Register] requires of a component it will copy bit for
// bit. It costs one walk of t's fields.
func CheckPlainData(t reflect.Type) error {
	_, _, err := plainLayout(t)
	return err
}

// plainLayout checks that t is plain data and returns the byte ranges of its
// leaf fields, and the same ranges with adjacent ones merged, so padding is
// never compared or hashed (its content is not defined by Go).
func plainLayout(t reflect.Type) (fields, merged []byteRange, err error) {
	if err := walkPlain(t, t, "", 0, &fields); err != nil {
		return nil, nil, err
	}
	for _, r := range fields {
		if n := len(merged); n > 0 && merged[n-1].off+merged[n-1].len == r.off {
			merged[n-1].len += r.len
			continue
		}
		merged = append(merged, r)
	}
	return fields, merged, nil
}

func walkPlain(root, t reflect.Type, path string, off uintptr, out *[]byteRange) error {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		if t.Size() > 0 {
			*out = append(*out, byteRange{off: off, len: t.Size(), field: path, kind: t.Kind()})
		}
		return nil
	case reflect.Array:
		for i := 0; i < t.Len(); i++ {
			if err := walkPlain(root, t.Elem(), fmt.Sprintf("%s[%d]", path, i), off+uintptr(i)*t.Elem().Size(), out); err != nil {
				return err
			}
		}
		return nil
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			p := f.Name
			if path != "" {
				p = path + "." + f.Name
			}
			if err := walkPlain(root, f.Type, p, off+f.Offset, out); err != nil {
				return err
			}
		}
		return nil
	}
	return &PlainDataError{Type: root, Field: path, Kind: t.Kind()}
}

// formatField renders the bytes of one leaf field as its Go value, for
// diagnostics; unknown sizes fall back to hex.
func formatField(b []byte, kind reflect.Kind) string {
	ne := binary.NativeEndian
	switch {
	case kind == reflect.Bool && len(b) == 1:
		return fmt.Sprint(b[0] != 0)
	case kind == reflect.Float32 && len(b) == 4:
		return fmt.Sprint(math.Float32frombits(ne.Uint32(b)))
	case kind == reflect.Float64 && len(b) == 8:
		return fmt.Sprint(math.Float64frombits(ne.Uint64(b)))
	case kind >= reflect.Int && kind <= reflect.Int64:
		switch len(b) {
		case 1:
			return fmt.Sprint(int8(b[0]))
		case 2:
			return fmt.Sprint(int16(ne.Uint16(b)))
		case 4:
			return fmt.Sprint(int32(ne.Uint32(b)))
		case 8:
			return fmt.Sprint(int64(ne.Uint64(b)))
		}
	case kind >= reflect.Uint && kind <= reflect.Uint64:
		switch len(b) {
		case 1:
			return fmt.Sprint(b[0])
		case 2:
			return fmt.Sprint(ne.Uint16(b))
		case 4:
			return fmt.Sprint(ne.Uint32(b))
		case 8:
			return fmt.Sprint(ne.Uint64(b))
		}
	}
	return fmt.Sprintf("%x", b)
}
