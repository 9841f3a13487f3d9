// SPDX-License-Identifier: MIT
//
// The administrator's priority ceilings as amdqp.ko holds them
// (AMDQP_IOC_CEILINGS, uapi 1.2): from the [[rule]]s that grant more than
// the default, keyed by what the kernel knows of a queue's owner (uid, gid,
// cgroup id), so that a queue created before amdqpd looks at it, or by a
// process that never tags, is clamped all the same. amdqpd owns the table:
// it flushes it when it opens the device and keeps it equal to its rules.
#ifndef AMDQPD_CEILINGS_HPP
#define AMDQPD_CEILINGS_HPP

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <amdqp/amdqp.hpp>

#include "config_file.hpp"
#include "process_facts.hpp"

namespace amdqp::daemon {

// (AMDQP_CEIL_* kind, id) -> level.
using CeilingKey = std::pair<std::uint32_t, std::uint64_t>;
using CeilingMap = std::map<CeilingKey, int>;

// A process and the rule that decided it (an index into the rules, or
// none: the default).
struct Decided {
    const ProcessFacts* facts = nullptr;
    std::optional<std::size_t> rule;
};

// The kernel entries @rules call for. A rule that grants above
// @default_ceiling and matches only on uid gives a uid entry, only on gid
// a gid entry; one that matches on cgroup or pod (and no uid or gid) an
// entry for the cgroup of each process in @procs it decided. Others (uid
// and cgroup together) have no kernel key: the daemon sets the level
// itself (SET_PRIORITY). Same key twice: the higher level (the kernel's
// rule).
CeilingMap ceiling_entries(const std::vector<Rule>& rules, int default_ceiling,
                           const std::vector<Decided>& procs);

class CeilingTable {
  public:
    enum class Result { same, pushed, unsupported, failed };
    // Makes the kernel's table equal @want: FLUSH on first use after
    // reset(), then SET what is new or changed and CLEAR what went.
    // unsupported: the module has no table (before uapi 1.2): the daemon's
    // own clamping (SET_PRIORITY) is all there is. @error: a message.
    Result sync(Device& dev, const CeilingMap& want, std::string& error);
    // The device was (re)opened: its table is unknown.
    void reset() {
        pushed_.clear();
        flushed_ = false;
        unsupported_ = false;
    }
    const CeilingMap& pushed() const { return pushed_; }

  private:
    CeilingMap pushed_;
    bool flushed_ = false;
    bool unsupported_ = false;
};

}  // namespace amdqp::daemon

#endif
