package v1alpha1

import "regexp"

// SupportedVersions names the language versions Runtime's validation
// admits, in the words of its message.
const SupportedVersions = "python 3.11 and 3.12, nodejs 20 and 22, go 1.23 and later"

// goVersion is the go versions Runtime's validation admits.
var goVersion = regexp.MustCompile(`^1[.](2[3-9]|[3-9][0-9])$`)

// Supports is whether Runtime's validation admits a version of a language,
// so that a client can refuse one before it writes a manifest the API
// server would refuse (TestSupportsAsAdmitted holds the two together).
func (l Language) Supports(version string) bool {
	switch l {
	case LanguagePython:
		return version == "3.11" || version == "3.12"
	case LanguageNodeJS:
		return version == "20" || version == "22"
	case LanguageGo:
		return goVersion.MatchString(version)
	}
	return false
}
