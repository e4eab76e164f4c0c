#pragma once
// View ▸ Theme: Light, Dark or System (the desktop's), one of them checked. A choice applies to the
// whole application at once (views::applyTheme) and is remembered across sessions.
#include <QObject>

class QActionGroup;
class QMenu;

namespace allocscope::views {
enum class ThemeChoice;
}

namespace allocscope::app {

class ThemeMenu : public QObject {
public:
    // Adds the Theme submenu to `view`, the remembered theme checked.
    ThemeMenu(QMenu* view, QObject* parent);
    // Applies `choice`, remembers it and checks its entry.
    void apply(views::ThemeChoice choice);
    // The theme remembered from an earlier session (System when none was chosen).
    static views::ThemeChoice saved();

private:
    QActionGroup* group_ = nullptr;
};

}  // namespace allocscope::app
