#pragma once
// For tests of the temporary-file arrays (alloc::SpillArray, issue #18): forces the spill from a
// tiny size and points $TMPDIR at a directory of the test's own, for one scope; both come back.
#include <QByteArray>
#include <QDir>
#include <QString>
#include <QStringList>

#include <cstddef>

#include "allocator/core/SpillArray.h"

namespace testfiles {

class SpillSetting {
public:
    SpillSetting(std::size_t bytes, const QString& tmpdir)
        : old_(allocscope::alloc::spillFromBytes()), oldTmp_(qgetenv("TMPDIR")) {
        allocscope::alloc::setSpillFromBytes(bytes);
        qputenv("TMPDIR", tmpdir.toLocal8Bit());
    }
    ~SpillSetting() {
        allocscope::alloc::setSpillFromBytes(old_);
        if (oldTmp_.isNull()) {
            qunsetenv("TMPDIR");
        } else {
            qputenv("TMPDIR", oldTmp_);
        }
    }
    SpillSetting(const SpillSetting&) = delete;
    SpillSetting& operator=(const SpillSetting&) = delete;

    // Everything in `dir`, hidden files included: a spill leaves nothing there.
    static QStringList filesIn(const QString& dir) {
        return QDir(dir).entryList(QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot);
    }

private:
    std::size_t old_;
    QByteArray oldTmp_;
};

}  // namespace testfiles
