#pragma once
// Storage's live blocks and stack trees -> the Stacks tab's view data (views never see storage
// types). Pure functions: tests call them on known inputs, StacksController off the GUI thread.
#include <QString>

#include <cstdint>
#include <string>
#include <vector>

#include "storage/session/LiveBlocks.h"
#include "storage/session/StackTree.h"
#include "views/data/LiveTensorsData.h"
#include "views/data/StackTreeData.h"

namespace allocscope::app {

// Why blocks of a run of this source kind ("snapshot", "csv", "demo") may have no frames: the
// tooltip of "no stack recorded".
QString noStackReason(const std::string& sourceKind);

// The tree as the tree view and icicle chart draw it. `diff`: two sides (before, after); each
// node's largest block is taken from the after side (the point the window stands on), else the
// only one. A diff's children are ordered by the size of their change, largest first.
views::StackTreeData toStackTreeData(const storage::StackNode& root, bool diff, const QString& noStackWhy);

// The live blocks at `event` of run `run`, with the innermost user frame of each (the CLI's
// `blocks` rule, storage::UserFrames::top) and its age in events.
views::LiveTensorsData toLiveTensorsData(const std::vector<storage::LiveBlock>& blocks, const storage::StackTree::StackOf& stackOf,
                                         int run, std::uint64_t event, const QString& noStackWhy);

}  // namespace allocscope::app
