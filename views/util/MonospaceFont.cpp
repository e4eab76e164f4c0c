#include "views/util/MonospaceFont.h"

#include <QFontDatabase>
#include <QFontInfo>

namespace allocscope::views {

QFont MonospaceFont::font() {
    QFont f = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    if (QFontInfo(f).fixedPitch()) return f;
    for (const char* family : {"DejaVu Sans Mono", "Liberation Mono", "Noto Sans Mono", "Monospace", "Courier New"}) {
        QFont candidate(QString::fromLatin1(family), f.pointSize() > 0 ? f.pointSize() : 10);
        candidate.setStyleHint(QFont::TypeWriter);
        candidate.setFixedPitch(true);
        if (QFontInfo(candidate).fixedPitch()) return candidate;
    }
    f.setStyleHint(QFont::TypeWriter);
    f.setFixedPitch(true);
    return f;
}

}  // namespace allocscope::views
