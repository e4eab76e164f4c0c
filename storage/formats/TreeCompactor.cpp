#include "storage/formats/TreeCompactor.h"

#include <algorithm>
#include <cstring>

namespace allocscope::formats {
namespace {

void appendRaw(std::string& out, uint64_t value, size_t width) {
    for (size_t i = 0; i < width; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

bool isContainer(PyKind kind) { return kind == PyKind::List || kind == PyKind::Tuple || kind == PyKind::Dict; }

}  // namespace

void TreeCompactor::collect(PyRef root, const PyTree::Mark& mark) {
    std::vector<PyRef>& todo = todo_;  // reused: collect() runs for every memo root
    todo.assign(1, root);
    while (!todo.empty()) {
        const PyRef ref = todo.back();
        todo.pop_back();
        if (ref < mark.nodes || (keptAt(ref, mark) != kNone && keptAt(ref, mark) != kDroppedEntry)) continue;
        Kept k;
        k.from = ref;
        k.node = tree_.node(ref);
        if (k.node.kind == PyKind::Str || k.node.kind == PyKind::Bytes) k.text = tree_.text(ref);
        if (isContainer(k.node.kind)) {
            const PyItems items = tree_.items(ref);
            k.itemsBegin = items_.size();
            k.itemsCount = items.size();
            items_.insert(items_.end(), items.begin(), items.end());
            for (const PyRef item : items) {
                if (item >= mark.nodes) todo.push_back(item);
            }
        }
        keptAt(ref, mark) = static_cast<uint32_t>(kept_.size());
        kept_.push_back(std::move(k));
    }
}

// The contents of a list or tuple whose items are all old values or young scalars and strings
// (a frames list of shared frame dicts, a pool id): equal signatures mean equal values.
bool TreeCompactor::signature(const Kept& k, const PyTree::Mark& mark, std::string& out) const {
    out.clear();
    out.push_back(static_cast<char>(k.node.kind));
    for (const PyRef item : keptItems(k)) {
        if (item < mark.nodes) {
            appendOlder(out, item);
            continue;
        }
        const Kept& c = kept_[keptIndex_[item - mark.nodes]];
        switch (c.node.kind) {
        case PyKind::Str:
        case PyKind::Bytes:
            out.push_back(c.node.kind == PyKind::Str ? 's' : 'b');
            appendRaw(out, c.text.size(), 8);
            out += c.text;
            break;
        case PyKind::Int:
        case PyKind::Float:
        case PyKind::Bool:
        case PyKind::None:
            out.push_back(static_cast<char>('0' + static_cast<int>(c.node.kind)));
            out.push_back(c.node.negative ? '-' : '+');
            appendRaw(out, c.node.bits, 8);
            break;
        default:
            return false;
        }
    }
    return true;
}

void TreeCompactor::appendOlder(std::string& out, PyRef item) {
    out.push_back('r');
    appendRaw(out, item, 4);
}

PyRef TreeCompactor::keptStr(std::string_view text) {
    lookup_.assign(1, 's');  // leaf()'s key
    lookup_.append(text);
    const auto it = strings_.find(lookup_);
    return it == strings_.end() ? kDropped : it->second;
}

PyRef TreeCompactor::keptList(PyItems olderItems) {
    lookup_.assign(1, static_cast<char>(PyKind::List));  // signature()'s key for such a list
    for (const PyRef item : olderItems) appendOlder(lookup_, item);
    const auto it = shared_.find(lookup_);
    return it == shared_.end() ? kDropped : it->second;
}

PyRef TreeCompactor::leaf(Kept& k) {
    switch (k.node.kind) {
    case PyKind::Str:
    case PyKind::Bytes: {
        std::string key = (k.node.kind == PyKind::Str ? "s" : "b") + k.text;
        auto it = strings_.find(key);
        if (it == strings_.end()) {
            const PyRef ref = k.node.kind == PyKind::Str ? tree_.addStr(k.text, k.node.offset) : tree_.addBytes(k.text, k.node.offset);
            it = strings_.emplace(std::move(key), ref).first;
        }
        k.to = it->second;
        break;
    }
    case PyKind::Int: k.to = tree_.addInt(k.node.bits, k.node.negative, k.node.offset); break;
    case PyKind::Float: {
        double value = 0;
        std::memcpy(&value, &k.node.bits, sizeof value);
        k.to = tree_.addFloat(value, k.node.offset);
        break;
    }
    case PyKind::Bool: k.to = tree_.addBool(k.node.bits != 0, k.node.offset); break;
    default: k.to = tree_.addNone(k.node.offset); break;
    }
    return k.to;
}

PyRef TreeCompactor::resolve(PyRef from, const PyTree::Mark& mark) {
    if (from < mark.nodes) return from;
    Kept& k = kept_[keptAt(from, mark)];
    return k.to != kDropped ? k.to : leaf(k);
}

PyTree::Mark TreeCompactor::compact(const PyTree::Mark& mark, const std::vector<PyRef*>& stackRoots,
                                    const std::vector<PyRef*>& memoRoots, const std::vector<PyRef>& dropped) {
    kept_.clear();
    items_.clear();
    keptIndex_.assign(tree_.size() - mark.nodes, kNone);
    std::vector<PyRef> onStack;  // a handful: the containers being filled
    for (PyRef* root : stackRoots) {
        if (*root >= mark.nodes && *root != kDropped) {
            onStack.push_back(*root);
            collect(*root, mark);
        }
    }
    // The converted entries, marked in the same flat table (kDroppedEntry) so that each memo root
    // (about three per entry) is checked in one step. Only a memo root is refused for it: collect()
    // still keeps an entry that a kept value contains.
    for (const PyRef ref : dropped) {
        if (ref >= mark.nodes && keptAt(ref, mark) == kNone) keptAt(ref, mark) = kDroppedEntry;
    }
    for (PyRef* root : memoRoots) {
        if (*root >= mark.nodes && *root != kDropped && keptAt(*root, mark) == kNone) collect(*root, mark);
    }
    for (const PyRef ref : dropped) {
        if (ref >= mark.nodes && keptAt(ref, mark) == kDroppedEntry) keptAt(ref, mark) = kNone;
    }
    std::sort(kept_.begin(), kept_.end(), [](const Kept& a, const Kept& b) { return a.from < b.from; });
    for (size_t i = 0; i < kept_.size(); ++i) keptAt(kept_[i].from, mark) = static_cast<uint32_t>(i);

    // Lists and tuples equal to one kept before stand for it; the rest get signatures to be found by.
    // Most are found (every entry's frames list, in a big file): their signature is built in one
    // reused buffer and only a new one is kept.
    std::vector<std::string> signatures(kept_.size());
    std::string signatureBuffer;
    for (size_t i = 0; i < kept_.size(); ++i) {
        Kept& k = kept_[i];
        if ((k.node.kind != PyKind::List && k.node.kind != PyKind::Tuple) ||
            std::find(onStack.begin(), onStack.end(), k.from) != onStack.end()) {
            continue;
        }
        if (!signature(k, mark, signatureBuffer)) continue;
        if (auto it = shared_.find(signatureBuffer); it != shared_.end()) {
            k.to = it->second;
            k.merged = true;
        } else {
            signatures[i] = signatureBuffer;
        }
    }

    tree_.truncate(mark);
    for (Kept& k : kept_) {
        if (isContainer(k.node.kind) && !k.merged) k.to = tree_.addContainer(k.node.kind, k.node.offset);
    }
    std::vector<PyRef> items;
    for (size_t i = 0; i < kept_.size(); ++i) {
        if (!isContainer(kept_[i].node.kind) || kept_[i].merged) continue;
        items.clear();
        for (const PyRef item : keptItems(kept_[i])) items.push_back(resolve(item, mark));
        tree_.append(kept_[i].to, PyItems(items));
        if (!signatures[i].empty()) {
            shared_.emplace(std::move(signatures[i]), kept_[i].to);
            frozen_.insert(kept_[i].to);
        }
    }

    std::vector<PyRef*> roots(stackRoots);
    roots.insert(roots.end(), memoRoots.begin(), memoRoots.end());
    std::sort(roots.begin(), roots.end());
    roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
    for (PyRef* root : roots) {
        if (*root == kDropped || *root < mark.nodes) continue;
        *root = keptAt(*root, mark) != kNone ? resolve(*root, mark) : kDropped;
    }
    kept_.clear();
    items_.clear();
    keptIndex_.clear();
    return tree_.mark();
}

}  // namespace allocscope::formats
