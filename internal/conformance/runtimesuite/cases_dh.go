package runtimesuite

import "github.com/abkit/abkit/internal/conformance"

func addInterceptCases(r *conformance.Registry) {}
func addHookCases(r *conformance.Registry)      {}
