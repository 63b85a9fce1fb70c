package process

import (
	"os"
	"runtime"
	"testing"
	"time"
)

// TestReadUsageOfThisProcess reads this test's own /proc entries after it
// has held memory and burnt CPU, so each field has to be non-trivial and
// consistent.
func TestReadUsageOfThisProcess(t *testing.T) {
	held := make([]byte, 64<<20)
	for i := range held {
		held[i] = byte(i)
	}
	for start := time.Now(); time.Since(start) < 300*time.Millisecond; {
		_ = time.Now()
	}
	u, err := ReadUsage(os.Getpid())
	runtime.KeepAlive(held)
	if err != nil {
		t.Fatal(err)
	}
	if u.RSS < 64<<20 {
		t.Errorf("RSS = %d bytes, want at least the 64 MiB this test holds", u.RSS)
	}
	// The test binary's own pages are mapped; the 64 MiB it holds are not
	// a file's.
	if u.RSSFile == 0 || u.RSSFile > u.RSS-64<<20 {
		t.Errorf("RSSFile = %d bytes, want some of the executable and none of the %d held", u.RSSFile, len(held))
	}
	if u.PeakRSS < u.RSS {
		t.Errorf("PeakRSS = %d < RSS = %d", u.PeakRSS, u.RSS)
	}
	if u.CPUSeconds < 0.2 {
		t.Errorf("CPUSeconds = %v, want at least the 0.3 s this test spun", u.CPUSeconds)
	}
}

func TestReadUsageOfNoProcess(t *testing.T) {
	if _, err := ReadUsage(1 << 30); err == nil {
		t.Error("ReadUsage of a pid that cannot exist: no error")
	}
}
