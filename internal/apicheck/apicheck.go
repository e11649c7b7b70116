// Package apicheck finds internal types in the API that a program outside
// this module can reach. Go lets an exported signature mention a type from
// an internal package (the caller cannot name it, but can pass nil or
// receive a value), so only a check like this one catches it.
package apicheck

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Checker finds a type from a package with an "internal" path element that
// appears in an exported signature, field or method of a package under
// follow. Leaks lists what it found, one line each.
type Checker struct {
	follow string // import path prefix whose exported types are walked
	seen   map[types.Object]bool
	Leaks  []string
}

// New returns a checker that walks the packages under the import path
// prefix follow (ending in "/").
func New(follow string) *Checker {
	return &Checker{follow: follow, seen: map[types.Object]bool{}}
}

func isInternal(path string) bool {
	return slices.Contains(strings.Split(path, "/"), "internal")
}

func (a *Checker) followed(pkg *types.Package) bool {
	return pkg != nil && strings.HasPrefix(pkg.Path()+"/", a.follow)
}

func (a *Checker) leak(via string, t types.Type) {
	if l := fmt.Sprintf("%s mentions %s", via, types.TypeString(t, nil)); !slices.Contains(a.Leaks, l) {
		a.Leaks = append(a.Leaks, l)
	}
}

// package_ walks every exported object of pkg.
func (a *Checker) package_(pkg *types.Package) {
	for _, name := range pkg.Scope().Names() {
		if obj := pkg.Scope().Lookup(name); obj.Exported() {
			a.object(obj)
		}
	}
}

// object walks what an outside user of obj can reach through it.
func (a *Checker) object(obj types.Object) {
	if a.seen[obj] || !a.followed(obj.Pkg()) {
		return
	}
	a.seen[obj] = true
	via := obj.Pkg().Name() + "." + obj.Name()
	if isInternal(obj.Pkg().Path()) {
		if l := via + " is itself in " + obj.Pkg().Path(); !slices.Contains(a.Leaks, l) {
			a.Leaks = append(a.Leaks, l)
		}
		return
	}
	switch obj := obj.(type) {
	case *types.TypeName:
		if alias, ok := obj.Type().(*types.Alias); ok {
			a.typ(via, types.Unalias(alias))
			return
		}
		a.members(via, obj.Type())
	default: // func, var, const, field, method
		a.typ(via, obj.Type())
	}
}

// members walks a named type's exported fields and methods (promoted ones
// included).
func (a *Checker) members(via string, t types.Type) {
	switch u := t.Underlying().(type) {
	case *types.Struct:
		a.fields(via, u)
	case *types.Interface:
		for i := range u.NumMethods() {
			if m := u.Method(i); m.Exported() {
				a.typ(via+"."+m.Name(), m.Type())
			}
		}
		return
	default:
		a.typ(via, u)
	}
	ms := types.NewMethodSet(types.NewPointer(t))
	for i := range ms.Len() {
		if m := ms.At(i).Obj(); m.Exported() {
			a.typ(via+"."+m.Name(), m.Type())
		}
	}
}

func (a *Checker) fields(via string, s *types.Struct) {
	for i := range s.NumFields() {
		f := s.Field(i)
		switch {
		case f.Exported():
			a.typ(via+"."+f.Name(), f.Type())
		case f.Embedded():
			// an unexported embedded type still promotes its exported fields
			if st, ok := derefStruct(f.Type()); ok {
				a.fields(via, st)
			}
		}
	}
}

func derefStruct(t types.Type) (*types.Struct, bool) {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	st, ok := t.Underlying().(*types.Struct)
	return st, ok
}

// typ walks a type as it appears in a signature or field.
func (a *Checker) typ(via string, t types.Type) {
	switch t := t.(type) {
	case *types.Alias:
		a.typ(via, types.Unalias(t))
	case *types.Named:
		if pkg := t.Obj().Pkg(); pkg != nil && isInternal(pkg.Path()) {
			a.leak(via, t)
			return
		}
		for i := range t.TypeArgs().Len() {
			a.typ(via, t.TypeArgs().At(i))
		}
		a.object(t.Obj())
	case *types.Pointer:
		a.typ(via, t.Elem())
	case *types.Slice:
		a.typ(via, t.Elem())
	case *types.Array:
		a.typ(via, t.Elem())
	case *types.Chan:
		a.typ(via, t.Elem())
	case *types.Map:
		a.typ(via, t.Key())
		a.typ(via, t.Elem())
	case *types.Signature:
		for _, tuple := range []*types.Tuple{t.Params(), t.Results()} {
			for i := range tuple.Len() {
				a.typ(via, tuple.At(i).Type())
			}
		}
	case *types.Struct:
		a.fields(via, t)
	case *types.Interface:
		for i := range t.NumMethods() {
			if m := t.Method(i); m.Exported() {
				a.typ(via+"."+m.Name(), m.Type())
			}
		}
	}
}

// ExportData runs `go list -export` in dir and maps import paths to their
// compiled export data, for go/importer.
func ExportData(run func(args ...string) []byte, patterns ...string) map[string]string {
	out := run(append([]string{"list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}"}, patterns...)...)
	m := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if path, file, ok := strings.Cut(sc.Text(), "\t"); ok && file != "" {
			m[path] = file
		}
	}
	return m
}

// newImporter reads packages from the export data `go list -export` made.
func newImporter(fset *token.FileSet, exports map[string]string) types.Importer {
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})
}

// PackageAPI walks the whole exported API of the package at path.
func (a *Checker) PackageAPI(path string, exports map[string]string) error {
	pkg, err := newImporter(token.NewFileSet(), exports).Import(path)
	if err != nil {
		return err
	}
	a.package_(pkg)
	return nil
}

// UsedAPI type-checks the package in dir (a program of the outside module)
// and walks every object of a package under a.follow that it refers to.
func (a *Checker) UsedAPI(dir string, exports map[string]string) error {
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return err
	}
	var files []*ast.File
	for _, name := range names {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			return err
		}
		files = append(files, f)
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	pkg, err := (&types.Config{Importer: newImporter(fset, exports)}).Check(filepath.Base(dir), fset, files, info)
	if err != nil {
		return err
	}
	for _, obj := range info.Uses {
		if obj.Pkg() != nil && obj.Pkg() != pkg {
			a.object(obj)
		}
	}
	return nil
}
