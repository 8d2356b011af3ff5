#include "drivers/port.h"

namespace toroid {

const CounterField kPortStatsFields[] = {
    TOROID_COUNTER(PortStats, rx_packets), TOROID_COUNTER(PortStats, rx_bytes),
    TOROID_COUNTER(PortStats, tx_packets), TOROID_COUNTER(PortStats, tx_bytes),
    TOROID_COUNTER(PortStats, tx_full),    TOROID_COUNTER(PortStats, rx_dropped),
};
const int kPortStatsFieldCount = static_cast<int>(sizeof kPortStatsFields / sizeof kPortStatsFields[0]);
static_assert(sizeof(PortStats) == 6 * sizeof(uint64_t), "add the new PortStats field to kPortStatsFields");

}  // namespace toroid
