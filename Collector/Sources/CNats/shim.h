// The NATS C client (Debian's libnats-dev, pkg-config libnats), for the collector's JetStream store.
#include <nats/nats.h>
