#pragma once
// Creating a session file atomically. The file is written complete (every table of the current
// schema, WAL mode, application id) under a temporary name in the target's folder, closed, and
// then published under the target name with link(2), which fails if the name exists. Another
// process therefore sees either no file or an intact empty session, never a half-created one,
// and two processes creating the same session at once both end up recording into one file.
#include <string>

namespace allocscope::storage {

class NewSessionFile {
public:
    // Writes the empty session beside `target` (SessionError if the folder is not writable).
    explicit NewSessionFile(std::string target);
    ~NewSessionFile();  // removes the temporary file unless it was published
    NewSessionFile(const NewSessionFile&) = delete;
    NewSessionFile& operator=(const NewSessionFile&) = delete;

    // The temporary file, to fill before publishing (merge copies runs into it).
    const std::string& temporaryPath() const { return temporary_; }
    // Makes the file appear at the target name. false when something already exists there (the
    // temporary file is then removed and the existing file left as it is).
    bool publish();

private:
    std::string target_;
    std::string temporary_;
    bool settled_ = false;  // published, or removed after losing the race
};

}  // namespace allocscope::storage
