package db

import (
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/uptrace/bun"
)

var (
	nullTimeType    = reflect.TypeFor[bun.NullTime]()
	jsonObjectType  = reflect.TypeFor[JSONObject]()
	jsonStringsType = reflect.TypeFor[JSONStrings]()
	jsonListType    = reflect.TypeFor[JSONList]()
)

// objectValue converts a row column's value to what the object field takes.
// set is false for NULL, which leaves a non-nullable field at its default.
func objectValue(v reflect.Value) (val any, set bool) {
	switch v.Type() {
	case nullTimeType:
		t := v.Interface().(bun.NullTime)
		if t.IsZero() {
			return nil, true
		}
		return t.Time.UTC(), true
	case jsonObjectType:
		return map[string]any(v.Interface().(JSONObject)), true
	case jsonStringsType:
		return []string(v.Interface().(JSONStrings)), true
	case jsonListType:
		return []map[string]any(v.Interface().(JSONList)), true
	}
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil, false
		}
		return v.Elem().Interface(), true
	}
	if t, ok := v.Interface().(time.Time); ok {
		return t.UTC(), true
	}
	return v.Interface(), true
}

// setRowValue stores an object field's value into a row column.
func setRowValue(dst reflect.Value, val any) error {
	switch dst.Type() {
	case nullTimeType:
		switch t := val.(type) {
		case *time.Time:
			if t == nil {
				dst.Set(reflect.ValueOf(bun.NullTime{}))
			} else {
				dst.Set(reflect.ValueOf(bun.NullTime{Time: t.UTC()}))
			}
		case time.Time:
			dst.Set(reflect.ValueOf(bun.NullTime{Time: t.UTC()}))
		default:
			return fmt.Errorf("cannot store %T in a timestamp column", val)
		}
		return nil
	case jsonObjectType:
		m, ok := val.(map[string]any)
		if !ok {
			return fmt.Errorf("cannot store %T in a JSON object column", val)
		}
		dst.Set(reflect.ValueOf(JSONObject(m)))
		return nil
	case jsonStringsType:
		l, ok := val.([]string)
		if !ok {
			return fmt.Errorf("cannot store %T in a JSON list column", val)
		}
		dst.Set(reflect.ValueOf(JSONStrings(l)))
		return nil
	case jsonListType:
		l, ok := val.([]map[string]any)
		if !ok {
			return fmt.Errorf("cannot store %T in a JSON list column", val)
		}
		dst.Set(reflect.ValueOf(JSONList(l)))
		return nil
	}
	v := reflect.ValueOf(val)
	switch {
	case val == nil:
		dst.SetZero()
	case v.Type() == dst.Type():
		dst.Set(v)
	case dst.Kind() == reflect.Pointer && v.Type() == dst.Type().Elem():
		p := reflect.New(v.Type())
		p.Elem().Set(v)
		dst.Set(p)
	case v.Kind() == reflect.Pointer && v.Type().Elem() == dst.Type():
		if v.IsNil() {
			dst.SetZero()
		} else {
			dst.Set(v.Elem())
		}
	default:
		return fmt.Errorf("cannot store %T in a %s column", val, dst.Type())
	}
	return nil
}

func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }
