// Command demo is a tool service with no upstream: a counter and a note, so
// a newcomer can try reads, previewed writes, tickets and human approval
// without owning any home-lab application.
package main

import (
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/demo/counter"
)

func main() {
	toolkit.Run("demo",
		counter.Module,
	)
}
