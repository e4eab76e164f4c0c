#pragma once
// An immutable, shared string of 8 bytes: the `action`, `compile_context` and `user_metadata` of
// a trace entry.
//
// Why: a 100 MB snapshot has a million trace entries, and three std::string members cost 96
// bytes each (issue #5: import peak RSS). Their values repeat ("alloc", "N/A", "") so a reader
// interns them and every entry holds one pointer to a shared, reference-counted text. Contents
// never change after construction and equality compares contents, so sharing is an encoding
// detail (as for FrameList). The empty string holds no allocation.
#include <atomic>
#include <cstddef>
#include <string>
#include <string_view>

namespace allocscope::formats {

class SharedString {
public:
    SharedString() = default;
    // Implicit on purpose: assigning a literal or a std::string to a field keeps working.
    SharedString(std::string text);   // NOLINT(google-explicit-constructor)
    SharedString(const char* text);   // NOLINT(google-explicit-constructor)
    explicit SharedString(std::string_view text);
    SharedString(const SharedString& other) noexcept;
    SharedString(SharedString&& other) noexcept : node_(other.node_) { other.node_ = nullptr; }
    SharedString& operator=(const SharedString& other) noexcept;
    SharedString& operator=(SharedString&& other) noexcept;
    ~SharedString();

    const std::string& str() const;
    operator const std::string&() const { return str(); }  // NOLINT(google-explicit-constructor)
    operator std::string_view() const { return str(); }    // NOLINT(google-explicit-constructor)
    const char* c_str() const { return str().c_str(); }
    const char* data() const { return str().data(); }
    size_t size() const { return node_ ? node_->text.size() : 0; }
    bool empty() const { return size() == 0; }

    // The same underlying text (not merely equal contents); empty strings all share "none".
    bool sharesWith(const SharedString& other) const { return node_ == other.node_; }

    friend bool operator==(const SharedString& a, const SharedString& b) {
        return a.node_ == b.node_ || a.str() == b.str();
    }
    // Exact-match overloads so that comparing with a literal or std::string is never ambiguous.
    friend bool operator==(const SharedString& a, const std::string& b) { return a.str() == b; }
    friend bool operator==(const SharedString& a, const char* b) { return a.str() == b; }

private:
    struct Node {
        std::atomic<size_t> refs{1};
        std::string text;
    };
    void release() noexcept;

    Node* node_ = nullptr;  // null for the empty string
};

}  // namespace allocscope::formats
