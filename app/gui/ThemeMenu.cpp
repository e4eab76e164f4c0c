#include "app/gui/ThemeMenu.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QMenu>
#include <QSettings>

#include <utility>

#include "views/theme/ThemePalette.h"

namespace allocscope::app {
namespace {
const char* const kThemeKey = "view/theme";

QString themeName(views::ThemeChoice choice) {
    switch (choice) {
        case views::ThemeChoice::Light: return QStringLiteral("light");
        case views::ThemeChoice::Dark: return QStringLiteral("dark");
        case views::ThemeChoice::System: return QStringLiteral("system");
    }
    return QStringLiteral("system");
}
}  // namespace

ThemeMenu::ThemeMenu(QMenu* view, QObject* parent) : QObject(parent), group_(new QActionGroup(this)) {
    QMenu* menu = view->addMenu(tr("T&heme"));
    const std::pair<QString, views::ThemeChoice> themes[] = {
        {tr("&Light"), views::ThemeChoice::Light}, {tr("&Dark"), views::ThemeChoice::Dark}, {tr("&System"), views::ThemeChoice::System}};
    const QString current = themeName(saved());
    for (const auto& [label, choice] : themes) {
        QAction* a = menu->addAction(label);
        a->setCheckable(true);
        a->setData(themeName(choice));
        a->setChecked(themeName(choice) == current);
        group_->addAction(a);
        const views::ThemeChoice c = choice;
        connect(a, &QAction::triggered, this, [this, c] { apply(c); });
    }
}

void ThemeMenu::apply(views::ThemeChoice choice) {
    views::applyTheme(*qApp, choice);
    QSettings().setValue(kThemeKey, themeName(choice));
    for (QAction* a : group_->actions()) a->setChecked(a->data().toString() == themeName(choice));
}

views::ThemeChoice ThemeMenu::saved() {
    const QString theme = QSettings().value(kThemeKey, QStringLiteral("system")).toString();
    if (theme == QLatin1String("light")) return views::ThemeChoice::Light;
    if (theme == QLatin1String("dark")) return views::ThemeChoice::Dark;
    return views::ThemeChoice::System;
}

}  // namespace allocscope::app
