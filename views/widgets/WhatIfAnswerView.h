#pragma once
// Over the Compare tab's charts when the program is "This recording": one line per config saying
// what changed against the recording ("expandable_segments:True: the OOM at op 4,812 does not
// happen; peak reserved 3.96 GiB → 2.48 GiB; …; smallest GPU without OOM: 24gb"). Selectable
// text, so a user can copy the answer into a ticket.
#include <QWidget>

#include "views/data/WhatIfAnswerData.h"

class QLabel;

namespace allocscope::views {

class WhatIfAnswerView : public QWidget {
    Q_OBJECT
public:
    explicit WhatIfAnswerView(QWidget* parent = nullptr);

    // An answer without lines hides the view.
    void setAnswer(const WhatIfAnswer& answer);
    const WhatIfAnswer& answer() const { return answer_; }
    // The shown text, plain (tests, copy).
    QString plainText() const;

    // The sentence for one config; with `window` (WhatIfAnswer::windowNote set) every figure
    // that covers only the recorded window carries " (window)".
    static QString sentence(const WhatIfAnswerLine& line);
    static QString sentence(const WhatIfAnswerLine& line, bool window);
    QString toolTipText() const;  // the text's tooltip (with the window's note when there is one)

private:
    WhatIfAnswer answer_;
    QLabel* text_;
};

}  // namespace allocscope::views
