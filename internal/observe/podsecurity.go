package observe

import "fmt"

// LabelEnforce is the label by which a namespace enforces a Pod Security
// level.
const LabelEnforce = "pod-security.kubernetes.io/enforce"

// levelRestricted refuses what Kaniko needs: root and a few capabilities.
const levelRestricted = "restricted"

const msgFmtBuildNotAdmitted = "namespace %s enforces the restricted Pod Security level, which refuses Kaniko's build pods (they run as root with a few capabilities): " +
	"label it %s=baseline (with warn and audit at restricted to keep checking the workloads), or use an image source"

// BuildNotAdmitted says why a build pod cannot run in a namespace with these
// labels, or "" when nothing says it cannot. A restricted namespace would
// refuse the pods silently: the Job would wait for ever.
func BuildNotAdmitted(namespace string, labels map[string]string) string {
	if labels[LabelEnforce] != levelRestricted {
		return ""
	}
	return fmt.Sprintf(msgFmtBuildNotAdmitted, namespace, LabelEnforce)
}
