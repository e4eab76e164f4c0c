#pragma once
// What the centre shows before anything is open: what AllocScope is, how to open a session, a
// snapshot or an RMM CSV, and a link to the guided lessons (lessonsRequested) for a newcomer.
#include <QLabel>

namespace allocscope::views {

class WelcomeHint : public QLabel {
    Q_OBJECT
public:
    explicit WelcomeHint(QWidget* parent = nullptr);

signals:
    void lessonsRequested();
};

}  // namespace allocscope::views
