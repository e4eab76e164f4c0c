#include "storage/formats/SharedString.h"

#include <utility>

namespace allocscope::formats {

SharedString::SharedString(std::string text) {
    if (!text.empty()) node_ = new Node{{1}, std::move(text)};
}

SharedString::SharedString(const char* text) : SharedString(std::string_view(text)) {}

SharedString::SharedString(std::string_view text) {
    if (!text.empty()) node_ = new Node{{1}, std::string(text)};
}

SharedString::SharedString(const SharedString& other) noexcept : node_(other.node_) {
    if (node_ != nullptr) node_->refs.fetch_add(1, std::memory_order_relaxed);
}

SharedString& SharedString::operator=(const SharedString& other) noexcept {
    if (node_ != other.node_) {
        if (other.node_ != nullptr) other.node_->refs.fetch_add(1, std::memory_order_relaxed);
        release();
        node_ = other.node_;
    }
    return *this;
}

SharedString& SharedString::operator=(SharedString&& other) noexcept {
    if (this != &other) {
        release();
        node_ = std::exchange(other.node_, nullptr);
    }
    return *this;
}

SharedString::~SharedString() { release(); }

const std::string& SharedString::str() const {
    static const std::string none;
    return node_ != nullptr ? node_->text : none;
}

void SharedString::release() noexcept {
    // acq_rel: the last owner must see every write made through the other owners before deleting.
    if (node_ != nullptr && node_->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete node_;
    node_ = nullptr;
}

}  // namespace allocscope::formats
