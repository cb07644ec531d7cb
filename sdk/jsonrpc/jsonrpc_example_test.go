package jsonrpc_test

import (
	"fmt"

	"github.com/abkit/abkit/sdk/jsonrpc"
)

func ExampleParse() {
	msgs, err := jsonrpc.Parse([]byte(`[{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name": "get_weather"}},
		{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"no such tool"}}]`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range msgs {
		fmt.Println(m.ID, m.Method, string(m.Params), m.IsResponse(), jsonrpc.MCPMethod(m.Method))
	}
	_, err = jsonrpc.Parse([]byte(`{"choices":[]}`))
	fmt.Println(err)
	// Output:
	// 7 tools/call {"name":"get_weather"} false true
	// 7   true false
	// not a JSON-RPC message
}
