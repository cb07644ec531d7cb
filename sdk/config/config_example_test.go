package config_test

import (
	"fmt"

	"github.com/abkit/abkit/sdk/config"
	"github.com/abkit/abkit/sdk/gateway"
)

type limits struct {
	Limit  int    `json:"limit"`
	Header string `json:"header"`
}

var schema = &gateway.ConfigSchema{Fields: []gateway.Field{
	{Name: "limit", Type: "integer", Required: true, Description: "requests allowed at once"},
	{Name: "header", Type: "string", Description: "request header naming the client"},
}}

func ExampleDecode() {
	c := limits{Header: "X-Client"} // the defaults
	fmt.Println(config.Decode("rate-limiter", schema, []byte(`{"limit":5}`), &c), c.Limit, c.Header)
	fmt.Println(config.Decode("rate-limiter", schema, []byte(`{"limit":5,"burst":2}`), &c))
	fmt.Println(config.Decode("rate-limiter", schema, []byte(`{"limit":"5"}`), &c))
	fmt.Println(config.Decode("rate-limiter", schema, []byte(`{"header":"X-Client"}`), &c))
	// Output:
	// <nil> 5 X-Client
	// rate-limiter config: unknown field "burst"; known fields: limit, header
	// rate-limiter config: field "limit": want integer, got JSON string
	// rate-limiter config: missing required field "limit"
}

func ExampleCheckSchema() {
	fmt.Println(config.CheckSchema(schema, limits{}))
	type drifted struct {
		Limit int `json:"limit"`
		Burst int `json:"burst"`
	}
	fmt.Println(config.CheckSchema(schema, drifted{}))
	// Output:
	// <nil>
	// schema field "header" has no struct field
	// struct field "burst" is missing from the schema
}
