// Command sleeper says it is ready and sleeps until it is killed, so that a
// test can read its resident pages.
package main

import (
	"fmt"
	"time"
)

func main() {
	fmt.Println("ready")
	time.Sleep(time.Hour)
}
