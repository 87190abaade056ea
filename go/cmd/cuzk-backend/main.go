// Command cuzk-backend prints the backend of the default engine of the library it links (through
// go/lib): "cpu" for the default build. `make test` ends by checking it, so the tests' feature
// builds (GPU emulator, CUDA) never stay behind as what a node links.
package main

import (
	"fmt"
	"os"

	"github.com/cuzk-dev/cuzk/go/cuzk"
)

func main() {
	e, err := cuzk.Default()
	if err != nil {
		fmt.Fprintln(os.Stderr, "cuzk-backend:", err)
		os.Exit(1)
	}
	s, err := e.Summary()
	if err != nil {
		fmt.Fprintln(os.Stderr, "cuzk-backend:", err)
		os.Exit(1)
	}
	fmt.Println(s.Backend)
}
