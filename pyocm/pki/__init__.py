"""Keys, certificates, CSRs, kubeconfigs and service-account tokens: pure, no I/O."""

import warnings

# Go's x509 takes a common name longer than X.520's 64 characters, and OCM's add-on
# agents need one (system:open-cluster-management:cluster:<c>:addon:<a>:agent:<agent>).
# cryptography reads and writes such names but warns each time it meets one: on a hub,
# once per add-on CSR it reads, approves or signs.
LONG_NAME_WARNING = r"Attribute's length must be >= 1 and <= 64"
warnings.filterwarnings("ignore", message=LONG_NAME_WARNING, category=UserWarning)
